"""infra/files.py: a file is replaced whole, and a failed write leaves the old one and no partial file."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import pytest

from infra.files import write_atomically


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "table.json"
    write_atomically(target, lambda out: out.write(b"old"))

    def half(out: BinaryIO) -> None:
        out.write(b"half of the new")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, half)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["table.json"]
    write_atomically(target, lambda out: out.write(b"new"))
    assert target.read_bytes() == b"new" and len(list(tmp_path.iterdir())) == 1
