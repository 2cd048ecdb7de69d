"""Vectors kept in the machine's vector cache (``<prefix><version>.npz``, ``RAG_VECTOR_CACHE_DIR``): a start
with the same inputs, in any state folder, reads one file instead of embedding again. Used for the English
renderings and the phrasings; setup computes them (:mod:`anchorgpu.warm`)."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

import numpy as np

from infra.files import write_atomically

log = logging.getLogger(__name__)

# Versions kept per prefix: the cache is shared by checkouts and test glossaries of other versions, so one
# writer must not evict the others' files; the least recently read go first.
KEEP_VERSIONS = 16


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
    if len(matrix) != count:
        return None
    with contextlib.suppress(OSError):  # a read-only cache is still read
        os.utime(path)  # recently read: the last to be evicted
    return matrix


def write_kept(folder: Path, prefix: str, version: str, matrix: np.ndarray) -> None:
    """Keeps ``matrix`` as ``<prefix><version>.npz``, evicting the least recently used versions of that prefix
    beyond :data:`KEEP_VERSIONS`."""
    path = folder / f"{prefix}{version}.npz"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda out: np.savez(out, vectors=matrix))
        _evict(folder, prefix, keep=path)
    except OSError:  # a read-only folder only loses the shortcut
        log.warning("could not keep the vectors in %s", folder, exc_info=True)


def _evict(folder: Path, prefix: str, keep: Path) -> None:
    def used(candidate: Path) -> float:
        try:
            return candidate.stat().st_mtime
        except OSError:  # removed meanwhile by another process
            return 0.0

    others = sorted((old for old in folder.glob(f"{prefix}*.npz") if old != keep), key=used, reverse=True)
    for old in others[KEEP_VERSIONS - 1:]:
        old.unlink(missing_ok=True)
