"""The machine's vector cache (rag.retrieval.kept): shared by checkouts and test glossaries, so a writer evicts
only the least recently used versions beyond KEEP_VERSIONS, never the one another process just read."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from rag.retrieval.kept import KEEP_VERSIONS, read_kept, write_kept


def _matrix(rows: int) -> np.ndarray:
    return np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)


def test_a_kept_matrix_reads_back_only_with_its_row_count(tmp_path: Path) -> None:
    write_kept(tmp_path, "p-", "v1", _matrix(3))
    assert np.array_equal(read_kept(tmp_path / "p-v1.npz", 3), _matrix(3))  # type: ignore[arg-type]
    assert read_kept(tmp_path / "p-v1.npz", 4) is None
    assert read_kept(tmp_path / "p-none.npz", 3) is None


def test_an_unreadable_file_is_computed_again_not_raised(tmp_path: Path) -> None:
    (tmp_path / "p-bad.npz").write_bytes(b"not a numpy archive")
    assert read_kept(tmp_path / "p-bad.npz", 3) is None


def test_a_writer_evicts_the_least_recently_read_versions_and_no_other_prefix(tmp_path: Path) -> None:
    write_kept(tmp_path, "other-", "x", _matrix(1))
    for n in range(KEEP_VERSIONS):
        write_kept(tmp_path, "p-", f"v{n}", _matrix(2))
        os.utime(tmp_path / f"p-v{n}.npz", (1_000_000 + n, 1_000_000 + n))  # written in this order
    assert read_kept(tmp_path / "p-v0.npz", 2) is not None  # the oldest written, but read just now
    write_kept(tmp_path, "p-", "new", _matrix(2))
    kept = {path.name for path in tmp_path.glob("p-*.npz")}
    assert len(kept) == KEEP_VERSIONS
    assert {"p-new.npz", "p-v0.npz"} <= kept and "p-v1.npz" not in kept
    assert (tmp_path / "other-x.npz").is_file()
