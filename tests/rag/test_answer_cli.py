"""`anchorgpu ask --json` as a real process on the small model: the output contract other tools parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT, SMALL_MODEL


def run_ask(tmp_path: Path, *args: str, model: Path = SMALL_MODEL) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DB_"))}
    # a generous request timeout: on a loaded CI box a timeout would turn the answer into a fallback
    env.update({"LLM_MODEL_PATH": str(model), "LLM_MAX_TOKENS": "24", "LLM_REQUEST_TIMEOUT_S": "400",
                "DB_URL": f"sqlite:///{tmp_path / 'cli.db'}", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1"})
    return subprocess.run([sys.executable, "-m", "anchorgpu", "ask", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)


def test_ask_json_contract_in_scope_and_out_of_scope(tmp_path: Path) -> None:
    done = run_ask(tmp_path, "How does NVLink connect GPUs?", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads(done.stdout)
    assert list(payload) == ["answer", "grounded", "sources", "model", "ttft_s", "tokens"]
    assert payload["sources"] and set(payload["sources"][0]) == {"id", "term", "definition", "source"}
    assert any("nvlink" in s["id"] for s in payload["sources"])
    assert isinstance(payload["grounded"], bool) and payload["tokens"] > 0
    assert payload["model"] == SMALL_MODEL.name

    # out of scope: refused, and the (missing) model is never needed for it
    refused = run_ask(tmp_path, "какая погода в Москве завтра?", "--json", model=tmp_path / "absent.gguf")
    assert refused.returncode == 0, refused.stderr[-2000:]
    payload = json.loads(refused.stdout)
    assert payload["grounded"] is False and payload["sources"] == [] and payload["tokens"] == 0
    assert "глоссари" in payload["answer"]


def test_ask_usage_errors_are_friendly(tmp_path: Path) -> None:
    done = run_ask(tmp_path, "   ")
    assert done.returncode == 2 and "empty question" in done.stderr and "Traceback" not in done.stderr
