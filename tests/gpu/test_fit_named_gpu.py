"""/fit answers about the GPU named (rented here or not), says what would make it fit, and checks the
tensor-parallel size against the model's heads."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.views.fit import render, result_json
from gpu.fit.engine import GIB, FitEngine, FitRequest, kv_cache_bytes, nearest_tp_sizes, tp_divides
from gpu.fit.service import FitService
from tests.conftest import fit_service, notes_en
from tests.gpu.test_fit_cli import run_cli
from tests.gpu.test_fit_engine import CONTRACT_KEYS


@pytest.fixture(scope="module")
def service() -> FitService:
    return fit_service()


def test_done_when_mixtral_on_one_3090() -> None:
    proc = run_cli("mixtral 8x7b q4 на одной 3090", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert list(payload)[:len(CONTRACT_KEYS)] == CONTRACT_KEYS  # the contract first, unchanged
    assert payload["gpu"] == "rtx-3090" and payload["gpu_count"] == 1 and payload["fits"] is False
    assert payload["rentable"] is False
    assert any("not rented here" in note for note in payload["notes"])
    kinds = {s["kind"]: s for s in payload["suggestions"]}
    assert kinds["quant"]["fits"] or kinds["offload"]["fits"]
    assert kinds["offload"]["layers"] == 32 and 0 < kinds["offload"]["value"] < 32
    assert kinds["gpus"]["value"] == 2
    cheapest = payload["cheapest"]
    assert cheapest and all(row["hourly_price"] is not None for row in cheapest)  # rentable ones only


def test_done_when_llama70b_on_four_h200() -> None:
    proc = run_cli("llama-3.1-70b bf16 h200 x4 ctx=131072", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert (payload["gpu"], payload["gpu_count"], payload["context"], payload["fits"]) == ("h200", 4, 131072, True)
    assert payload["rentable"] is True and payload["suggestions"] == []
    assert not any("Ignored" in note for note in payload["notes"])


@pytest.mark.parametrize(("text", "gpu"), [("whisper large-v3 на t4", "t4"),
                                           ("qwen2.5-7b on a rtx 3060", "rtx-3060-12gb"),
                                           ("llama-3.1-8b на v100", "v100-16gb")])
def test_answers_about_the_gpu_named(service: FitService, text: str, gpu: str) -> None:
    result = service.fit(text)
    assert result.gpu.id == gpu and not result.rentable and result.gpu_was_given
    assert result.cheapest and all(option.hourly_price is not None for option in result.cheapest)
    assert any("not rented here" in note for note in notes_en(result))
    ru = render(result, "ru")
    assert "не сдаётся в аренду" in ru and "в аренду у нас" in ru


def test_rented_gpu_has_no_rental_note(service: FitService) -> None:
    result = service.fit("llama-3.1-8b h100")
    assert result.rentable and not any("rented" in note for note in notes_en(result))


def test_no_gpu_given_picks_a_rentable_one(service: FitService) -> None:
    for text in ("llama-3.1-8b", "llama-3.1-405b bf16 ctx=131072"):
        result = service.fit(text)
        assert result.rentable and service.data.prices.on_demand(result.gpu.id) is not None


def test_every_suggestion_that_fits_does_fit(service: FitService) -> None:
    """Apply each suggestion to the request and evaluate again: it must fit (the suggestions are real)."""
    engine = service.engine
    for text in ("mixtral 8x7b q4 на одной 3090", "gemma-3-27b q4_k_m 3090 ctx=128k", "llama-3.3-70b fp8 l40s ctx=64k",
                 "qwen2.5-72b bf16 2x a100 ctx=128k batch=4", "gpt-oss-120b 4090"):
        result = service.fit(text)
        assert not result.fits and result.suggestions, text
        req = result.request
        for suggestion in result.suggestions:
            if suggestion.kind == "quant":
                changed = replace(req, quant=str(suggestion.value))
            elif suggestion.kind == "context":
                changed = replace(req, context=int(suggestion.value))
            elif suggestion.kind == "kv_dtype":
                changed = replace(req, kv_dtype=str(suggestion.value))
            elif suggestion.kind == "gpus":
                changed = replace(req, gpu_count=int(suggestion.value))
                assert tp_divides(req.model, int(suggestion.value))
            else:
                assert suggestion.kind == "offload" and suggestion.layers == req.model.layers
                assert suggestion.per_gpu_gib <= result.usable_bytes / GIB + 1e-9
                continue
            again = engine.evaluate(changed)
            assert again.fits == suggestion.fits, (text, suggestion)
            assert again.per_gpu.total / GIB == pytest.approx(suggestion.per_gpu_gib, abs=0.01)


def test_suggestion_lines_in_both_languages(service: FitService) -> None:
    result = service.fit("gemma-3-27b q4_k_m 3090 ctx=128k")
    payload_en, payload_ru = result_json(result, "en"), result_json(result, "ru")
    assert len(payload_en["suggestion_lines"]) == len(result.suggestions) == len(payload_ru["suggestion_lines"])
    assert any("-ngl" in line for line in payload_en["suggestion_lines"])
    assert any("ГиБ на GPU" in line for line in payload_ru["suggestion_lines"])
    assert "To make it fit on" in render(result, "en") and "Чтобы поместилось" in render(result, "ru")


def test_tp_must_divide_heads_and_kv_heads(service: FitService) -> None:
    models = service.data.models
    llama = models.get("llama-3.1-70b")  # 64 heads, 8 KV heads
    assert [n for n in (1, 2, 3, 4, 6, 8, 16) if tp_divides(llama, n)] == [1, 2, 4, 8, 16]  # 16 replicates KV
    phi = models.get("phi-3-medium")  # 40 heads, 10 KV heads: 4 and 8 split neither evenly
    assert tp_divides(phi, 2) and not tp_divides(phi, 4) and not tp_divides(phi, 8)
    assert nearest_tp_sizes(phi, 4) == [2]
    result = service.fit("llama-3.1-70b q4_k_m 3x h100")
    notes = notes_en(result)
    assert any("does not divide 64 attention heads / 8 KV heads" in n and "2, 4" in n for n in notes)
    assert 3 not in service.engine.valid_counts(result.request)


def test_kv_dtypes_sized_exactly(service: FitService) -> None:
    model = service.data.models.get("llama-3.1-8b")
    f16 = kv_cache_bytes(model, 8192, 1, "f16")
    assert f16 == 32 * 8192 * 2 * 8 * 128 * 2  # layers x tokens x (K+V) x kv heads x head_dim x 2 bytes
    assert kv_cache_bytes(model, 8192, 1, "fp8") == f16 / 2
    assert kv_cache_bytes(model, 8192, 1, "q8_0") == f16 / 2 * 34 / 32  # 34 B per 32-value block
    assert kv_cache_bytes(model, 8192, 1, "q4_0") == f16 / 2 * 18 / 32  # 18 B per 32-value block
    for kv in ("f16", "fp8", "q8_0", "q4_0"):
        assert service.fit(f"llama-3.1-8b h100 kv={kv}").request.kv_dtype == kv


def test_sliding_window_and_mla_as_configs_say(service: FitService) -> None:
    models = service.data.models
    oss = models.get("gpt-oss-120b")  # 18 full layers + 18 layers caching 128 tokens; 8 KV heads x 64
    per_token_layer = 2 * 8 * 64 * 2
    assert kv_cache_bytes(oss, 131072, 1, "f16") == (18 * 131072 + 18 * 128) * per_token_layer
    gemma = models.get("gemma-3-27b")  # 52 local layers (1024 tokens) : 10 global
    assert kv_cache_bytes(gemma, 32768, 1, "f16") == (10 * 32768 + 52 * 1024) * 2 * 16 * 128 * 2
    kimi = models.get("kimi-k2")  # MLA: 512 latent + 64 rope values per token per layer
    assert kv_cache_bytes(kimi, 4096, 1, "f16") == 61 * 4096 * (512 + 64) * 2
    engine: FitEngine = service.engine
    req = FitRequest(model=kimi, gpu=service.data.gpus.get("h200"), gpu_count=8, quant="fp8", context=4096)
    assert engine.breakdown(req, req.gpu, 8).kv_cache == kv_cache_bytes(kimi, 4096, 1, "f16")  # replicated


def test_no_bf16_on_t4(service: FitService) -> None:
    notes = notes_en(service.fit("qwen2.5-1.5b bf16 t4"))
    assert any("has no BF16" in note for note in notes)


@pytest.mark.parametrize("text", ["llama 70b train on 8 h100", "llama 8b full finetune on 4090", "llama 70b train",
                                  "llama 70b lora on a100"])
def test_training_that_does_not_fit_offers_sharding_and_adapters_that_do(service: FitService, text: str) -> None:
    """Full fine-tuning with DDP keeps everything on every GPU: the report names FSDP, LoRA and QLoRA with the
    fewest GPUs each fits on, and each of them, evaluated, fits with the bytes it says."""
    result = service.fit(text)
    assert not result.fits
    kinds = {suggestion.kind for suggestion in result.suggestions}
    assert "qlora" in kinds and (result.request.mode == "lora" or {"fsdp", "lora"} <= kinds), kinds
    engine, req = service.engine, result.request
    for suggestion in result.suggestions:
        if suggestion.kind not in ("fsdp", "lora", "qlora"):
            continue
        changed = replace(req, gpu_count=int(suggestion.value), parallel="fsdp") if suggestion.kind == "fsdp" \
            else replace(req, mode=suggestion.kind, gpu_count=int(suggestion.value), parallel=None,
                         quant="nf4" if suggestion.kind == "qlora" else req.quant)
        again = engine.evaluate(changed)
        if not again.fits:  # adapters on a base too big for one copy per GPU: sharded
            again = engine.evaluate(replace(changed, parallel="fsdp"))
        assert again.fits, (text, suggestion)
        assert again.per_gpu.total / GIB == pytest.approx(suggestion.per_gpu_gib, abs=0.01)
    lines = result_json(result, "ru")["suggestion_lines"]
    assert "QLoRA" in lines[-1] and "ГиБ на GPU" in lines[-1]  # the lightest way last
    assert "QLoRA" in render(result, "en")


def test_no_gpu_and_nothing_fits_says_so_instead_of_cheapest(service: FitService) -> None:
    result = service.fit("llama 70b train")
    assert not result.cheapest and not result.gpu_was_given
    assert "fit_note_no_gpu_none_fits" in {note.key for note in result.notes}
    assert "fit_note_no_gpu" not in {note.key for note in result.notes}
