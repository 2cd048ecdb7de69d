"""One owner per data file: parsed once, re-read after an edit, a broken edit keeps the last good version."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.datafile import DataFile


def _bump(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a new mtime even on coarse clocks


def test_parsed_once_then_again_after_an_edit(tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    path.write_text("1", encoding="utf-8")
    reads: list[str] = []

    def parse(p: Path) -> int:
        reads.append(p.name)
        return int(p.read_text(encoding="utf-8"))

    data = DataFile(path, parse)
    assert data.get() == 1 and data.get() == 1 and len(reads) == 1 and data.version == 1
    _bump(path, "22")
    assert data.get() == 22 and data.version == 2 and len(reads) == 2


def test_a_broken_edit_keeps_the_last_good_version(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "n.txt"
    path.write_text("1", encoding="utf-8")
    data = DataFile(path, lambda p: int(p.read_text(encoding="utf-8")))
    assert data.get() == 1
    _bump(path, "not a number")
    assert data.get() == 1 and data.get() == 1
    assert sum("cannot be used" in r.message for r in caplog.records) == 1  # logged once, not per read
    _bump(path, "3")
    assert data.get() == 3


def test_a_file_that_never_parsed_raises(tmp_path: Path) -> None:
    data = DataFile(tmp_path / "missing.yaml", lambda p: p.read_text(encoding="utf-8"))
    with pytest.raises(FileNotFoundError):
        data.get()
