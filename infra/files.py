"""Files written whole or not at all: a reader never sees half of one."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """``write`` fills a uniquely named file beside ``path``, which then replaces ``path`` in one rename
    (several processes may write the same file at once; the last rename wins). OSError on failure, with
    the partial file removed."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with partial.open("wb") as out:
            write(out)
        partial.replace(path)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
