"""`anchorgpu search` / `anchorgpu ingest` as real processes: the JSON contract other tools parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anchorgpu.cli import main
from infra.settings import get_settings
from tests.conftest import REPO_ROOT
from tests.rag.support import shared_chroma_dir, shared_retriever


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    shared_retriever()  # the index exists: the process only syncs (a no-op)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update({"RAG_CHROMA_PATH": str(shared_chroma_dir()), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return subprocess.run([sys.executable, "-m", "anchorgpu", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)


def test_search_json_contract_done_when() -> None:
    done = run_cli("search", "что такое кэш ключей и значений", "--k", "4", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    payload = json.loads(done.stdout)
    assert list(payload) == ["query", "in_scope", "results"]
    assert payload["query"] == "что такое кэш ключей и значений" and payload["in_scope"] is True
    assert len(payload["results"]) == 4
    for row in payload["results"]:
        assert list(row) == ["id", "term", "definition", "source", "score"]
        assert isinstance(row["score"], float) and row["source"].endswith(".txt")
    assert [r["id"].split("-", 1)[1] for r in payload["results"][:3]] == ["kv-cache"] * 3


@pytest.fixture
def in_process_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    shared_retriever()
    monkeypatch.setenv("RAG_CHROMA_PATH", str(shared_chroma_dir()))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_search_table_and_out_of_scope(in_process_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "what", "is", "the", "capital", "of", "Australia", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["in_scope"] is False
    assert main(["search", "NVLink", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert "in scope: yes" in out and "000-nvlink" in out and "score" in out


@pytest.mark.parametrize("bad", ["😀😀😀", "<b></b>", "x" * 10_000, "'; DROP TABLE glossary; --"])
def test_search_bad_input_is_clean(in_process_env: None, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    assert main(["search", bad, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["query"]) <= 500
    if bad.startswith(("😀", "<b>")):
        assert payload == {"query": bad, "in_scope": False, "results": []}


def test_search_usage_errors(in_process_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "   "]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["search", "gpu", "--k", "0"]) == 2
    assert "--k must be between" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["search"])
    assert exited.value.code == 2


def test_ingest_rerun_is_a_noop(in_process_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["added"] == report["updated"] == report["deleted"] == 0
    assert report["unchanged"] == report["total"] > 250


def test_ingest_reports_a_bad_collection_name(in_process_env: None, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("RAG_CHROMA_PATH", str(tmp_path))
    monkeypatch.setenv("RAG_COLLECTION", "x")
    get_settings.cache_clear()
    assert main(["ingest"]) == 1
    assert "RAG_COLLECTION" in capsys.readouterr().err
