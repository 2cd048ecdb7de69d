"""Vectors kept beside the embedded index (``<prefix><version>.npz``): a restart with the same inputs reads
one file instead of embedding again. Used for the English renderings and the phrasings."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from infra.files import write_atomically

log = logging.getLogger(__name__)


def read_kept(path: Path, count: int) -> np.ndarray | None:
    """The kept matrix, or None when there is none, it is unreadable or it has not ``count`` rows."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            matrix = np.asarray(data["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError):
        log.warning("unreadable kept vectors %s; computing them again", path, exc_info=True)
        return None
    return matrix if len(matrix) == count else None


def write_kept(folder: Path, prefix: str, version: str, matrix: np.ndarray) -> None:
    """Keeps ``matrix`` as ``<prefix><version>.npz`` and removes the other versions of that prefix."""
    path = folder / f"{prefix}{version}.npz"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda out: np.savez(out, vectors=matrix))
        for old in folder.glob(f"{prefix}*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # a read-only folder only loses the shortcut
        log.warning("could not keep the vectors in %s", folder, exc_info=True)
