"""`anchorgpu migrate` as an operator runs it: a real process against DB_URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra.migrate import head_revision

REPO_ROOT = Path(__file__).resolve().parents[2]


def _migrate(tmp_path: Path, db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DB_")}
    env.update({"DB_URL": db_url, "ANCHORGPU_STATE_DIR": str(tmp_path / "state"), "PYTHONPATH": str(REPO_ROOT)})
    return subprocess.run([sys.executable, "-m", "anchorgpu", "migrate", *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)


def test_migrate_brings_the_database_to_head_and_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    first = _migrate(tmp_path, url, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"revision": head_revision(), "previous": None, "head": head_revision()}
    again = _migrate(tmp_path, url)
    assert again.returncode == 0, again.stderr
    assert f"at revision {head_revision()} (head), nothing to do" in again.stdout


@pytest.mark.parametrize("url", ["mysql://nobody@localhost/app",  # not a URL we take
                                 "postgresql://postgres@127.0.0.1:1/test"])  # nothing listens there
def test_a_bad_or_unreachable_database_is_one_line_and_exit_1(tmp_path: Path, url: str) -> None:
    result = _migrate(tmp_path, url)
    assert result.returncode == 1
    assert result.stderr.startswith("anchorgpu migrate: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    as_json = _migrate(tmp_path, url, "--json")
    assert as_json.returncode == 1 and "error" in json.loads(as_json.stdout)
