"""`anchorgpu report` as an operator runs it: a real process against DB_URL holding real feedback rows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.gaps.log import FeedbackStore, Nearest, RecordedAnswer
from infra.db import create_engine, dispose_engine
from infra.migrate import migrate

REPO_ROOT = Path(__file__).resolve().parents[2]


def report(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "RAG_", "FEEDBACK_"))}
    env.update({"DB_URL": f"sqlite:///{tmp_path / 'app.db'}", "ANCHORGPU_STATE_DIR": str(tmp_path / "state"),
                "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"})
    return subprocess.run([sys.executable, "-m", "anchorgpu", "report", *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=180)


async def fill(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
    try:
        await migrate(engine)
        store = FeedbackStore(engine, "salt")
        near = (Nearest("011-kv-cache", 0.42),)
        for question in ("как испечь блины?", "рецепт блинов на молоке", "как приготовить блинчики дома"):
            await store.record_answer(RecordedAnswer(question, "ru", "не по теме", (), "none", "out_of_scope", (),
                                                     near))
        liked = await store.record_answer(RecordedAnswer("что такое KV-кэш?", "ru", "KV-кэш — …",
                                                         ("011-kv-cache",), "qwen", "extractive", ()))
        await store.vote(liked, 1, "up")
        await store.vote(liked, 2, "down")
    finally:
        await dispose_engine(engine)


@pytest.mark.long
def test_the_json_contract(tmp_path: Path) -> None:
    asyncio.run(fill(tmp_path))
    chart, export = tmp_path / "out" / "quality.png", tmp_path / "gaps.yaml"
    result = report(tmp_path, "--json", "--chart", str(chart), "--export-eval", str(export))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["feedback"] == {"up": 1, "down": 1, "wrong": 0}
    kinds = {c["kind"]: c for c in document["clusters"]}
    assert kinds["unanswered"]["count"] == 3 and kinds["unanswered"]["nearest"] == ["011-kv-cache"]
    assert kinds["downvoted"] == {"kind": "downvoted", "count": 1, "examples": ["что такое KV-кэш?"], "nearest": []}
    for cluster in document["clusters"]:
        assert isinstance(cluster["count"], int) and all(isinstance(e, str) for e in cluster["examples"])
    [week] = document["weeks"]
    assert week["answers"] == 4 and week["refusal_share"] == 0.75 and week["feedback_ratio"] == 0.5
    assert chart.read_bytes().startswith(b"\x89PNG")
    items = yaml.safe_load(export.read_text(encoding="utf-8"))["items"]
    assert [i["question"] for i in items] == ["как испечь блины?", "рецепт блинов на молоке",
                                              "как приготовить блинчики дома", "что такое KV-кэш?"]


def test_text_report_and_bad_arguments(tmp_path: Path) -> None:
    empty = report(tmp_path, "--since", "2026-01-01")
    assert empty.returncode == 0, empty.stderr
    assert "No unanswered or downvoted questions." in empty.stdout
    bad = report(tmp_path, "--since", "yesterday")
    assert bad.returncode == 2
    assert bad.stderr == "anchorgpu report: --since: 'yesterday' is not a date (use YYYY-MM-DD)\n"
