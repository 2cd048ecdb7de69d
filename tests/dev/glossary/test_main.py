"""`python -m dev.glossary [--check]` on a copy of the glossary folder, and on the repository itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dev.glossary.__main__ import main

REPO_ROOT = Path(__file__).resolve().parents[3]
GLOSSARY = REPO_ROOT / "data" / "glossary"


@pytest.fixture
def glossary_copy(tmp_path: Path) -> Path:
    target = tmp_path / "glossary"
    shutil.copytree(GLOSSARY, target)
    return target


def test_check_passes_on_the_shipped_glossary(glossary_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--glossary-dir", str(glossary_copy)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_fails_on_an_edited_entry_file_and_shows_the_difference(
    glossary_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = glossary_copy / "entries.yaml"
    original = entries.read_text(encoding="utf-8")
    line = next(line for line in original.splitlines() if line.startswith("  term: "))
    entries.write_text(original.replace(line, line + " (edited by hand)", 1), encoding="utf-8")
    assert main(["--check", "--glossary-dir", str(glossary_copy)]) == 1
    err = capsys.readouterr().err
    assert "is not what the sources and annotations generate" in err
    assert f"-{line} (edited by hand)" in err and f"+{line}" in err
    assert entries.read_text(encoding="utf-8") != original, "--check must not write"


def test_without_check_the_entry_file_is_regenerated(glossary_copy: Path) -> None:
    entries = glossary_copy / "entries.yaml"
    original = entries.read_text(encoding="utf-8")
    entries.unlink()
    assert main(["--check", "--glossary-dir", str(glossary_copy)]) == 1
    assert main(["--glossary-dir", str(glossary_copy)]) == 0
    assert entries.read_text(encoding="utf-8") == original


def test_a_missing_source_is_a_message_not_a_traceback(
    glossary_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    next((glossary_copy / "sources").iterdir()).unlink()
    assert main(["--check", "--glossary-dir", str(glossary_copy)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("glossary: ") and "Traceback" not in err


def test_the_module_runs_as_a_program_on_the_repository() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-m", "dev.glossary", "--check"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
