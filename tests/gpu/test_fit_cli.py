"""`anchorgpu fit` as a real process: the JSON contract, exit codes and readable text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.gpu.test_fit_engine import CONTRACT_KEYS

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anchorgpu", "fit", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


def test_json_contract() -> None:
    proc = run_cli("llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert all(key in payload for key in CONTRACT_KEYS)
    assert payload["fits"] is True and payload["model"] == "llama-3.1-70b" and payload["gpu_count"] == 2
    assert isinstance(payload["min_gpus"], int) and isinstance(payload["max_context"], int)
    # exit 0 when it does not fit, too
    proc = run_cli("llama-3.1-405b bf16 on 4090", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["fits"] is False


def test_bad_input_exit_2() -> None:
    proc = run_cli("lama-3.1-70b on h100", "--json")
    assert proc.returncode == 2
    payload = json.loads(proc.stdout)
    assert set(payload) == {"error", "suggestions"} and "llama-3.1-70b" in payload["suggestions"]
    proc = run_cli("lama-3.1-70b")
    assert proc.returncode == 2 and "Did you mean" in proc.stderr and "Traceback" not in proc.stderr


def test_text_and_config(tmp_path: Path) -> None:
    proc = run_cli("qwen2.5-7b", "на", "4090")
    assert proc.returncode == 0 and "Fits" in proc.stdout and "KV cache" in proc.stdout
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
                                  "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 8192,
                                  "tie_word_embeddings": True}))
    proc = run_cli("on l4", "--config", str(config), "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["gpu"] == "l4"
    config.write_text("{broken")
    proc = run_cli("on l4", "--config", str(config), "--json")
    assert proc.returncode == 2 and "not valid JSON" in json.loads(proc.stdout)["error"]
