"""`anchorgpu ask --json` as a real process on the small model: the output contract other tools parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, SMALL_MODEL


def run_ask(tmp_path: Path, *args: str, model: Path = SMALL_MODEL) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DB_"))}
    # a generous request timeout: on a loaded CI box a timeout would turn the answer into a fallback
    env.update({"LLM_MODEL_PATH": str(model), "LLM_ANSWER_MODE": "generate", "LLM_MAX_TOKENS": "24",
                "LLM_REQUEST_TIMEOUT_S": "400",
                "DB_URL": f"sqlite:///{tmp_path / 'cli.db'}", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1"})
    return subprocess.run([sys.executable, "-m", "anchorgpu", "ask", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.long
def test_ask_json_contract_in_scope_and_out_of_scope(tmp_path: Path) -> None:
    done = run_ask(tmp_path, "How does NVLink connect GPUs?", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads(done.stdout)
    contract = ["answer", "grounded", "sources", "model", "ttft_s", "tokens", "caveats"]
    assert list(payload)[:7] == contract
    # then why it went where it went, and the Russian original of an English rendering
    assert set(payload) - set(contract) <= {"original", "intent", "slots", "semantic"}
    assert payload["intent"] == "glossary" and isinstance(payload["slots"], dict)
    assert payload["sources"] and set(payload["sources"][0]) == {"id", "term", "definition", "source"}
    assert any("nvlink" in s["id"] for s in payload["sources"])
    assert isinstance(payload["grounded"], bool) and payload["tokens"] > 0
    assert payload["model"] == SMALL_MODEL.name

    # out of scope: refused, and the (missing) model is never needed for it
    refused = run_ask(tmp_path, "какая погода в Москве завтра?", "--json", model=tmp_path / "absent.gguf")
    assert refused.returncode == 0, refused.stderr[-2000:]
    payload = json.loads(refused.stdout)
    assert payload["grounded"] is False and payload["sources"] == [] and payload["tokens"] == 0
    assert "глоссари" in payload["answer"] and payload["intent"] == "refusal"


def test_ask_usage_errors_are_friendly(tmp_path: Path) -> None:
    done = run_ask(tmp_path, "   ")
    assert done.returncode == 2 and "empty question" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.long
def test_the_answers_a_customer_must_be_able_to_trust(tmp_path: Path) -> None:
    """The issue's own examples, as a user runs them: rules, catalog facts and comparisons never come from
    the model (a missing model file proves it)."""
    absent = tmp_path / "absent.gguf"
    rule = json.loads(run_ask(tmp_path, "можно ли остановить аренду и не платить за оставшуюся неделю?", "--json",
                              model=absent).stdout)
    assert rule["answer"].startswith("Нет.") and rule["model"] == "none"
    assert "не приостанавливает оплаченный период" in rule["answer"]
    assert [s["id"] for s in rule["sources"]] == ["002-rental-term"]
    memory = json.loads(run_ask(tmp_path, "сколько памяти у H100?", "--json", model=absent).stdout)
    assert "80 ГБ" in memory["answer"] and "16" not in memory["answer"]
    assert memory["sources"][0]["id"] == "gpu_catalog"
    for question, sides in (("чем отличается tensor parallel от pipeline parallel", ("tensor", "pipeline")),
                            ("what is the difference between DDP and FSDP", ("ddp", "fsdp")),
                            ("чем LoRA отличается от QLoRA", ("lora", "qlora")),
                            ("в чём разница между FP16 и BF16", ("fp16", "bf16"))):
        compared = json.loads(run_ask(tmp_path, question, "--json", model=absent).stdout)
        ids = [s["id"] for s in compared["sources"]]
        assert len(ids) >= 2 and all(any(side in i for i in ids) for side in sides), (question, ids)
        assert compared["grounded"] is True and compared["model"] == "none"
        for source in compared["sources"][:2]:  # each side's own definition, verbatim
            assert source["definition"] in compared["answer"]
