"""Fit engine mechanics: parallelism, training modes, limits, prices and the JSON contract."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from app.views.fit import render, result_json
from gpu.catalog import GPUCatalog, load_gpu_catalog
from gpu.fit.architectures import ModelCatalog, load_model_catalog
from gpu.fit.engine import GIB, FitEngine, FitRequest, kv_cache_bytes
from gpu.fit.service import FitService
from infra.markup import HTML
from tests.conftest import DATA_DIR, fit_service, notes_en

CONTRACT_KEYS = ["fits", "model", "mode", "quant", "gpu", "gpu_count", "context", "batch", "weights_gib",
                 "kv_cache_gib", "activations_gib", "overhead_gib", "total_gib", "per_gpu_gib",
                 "usable_per_gpu_gib", "min_gpus", "max_context", "decode_tokens_per_s_max", "notes"]


@pytest.fixture(scope="module")
def gpus() -> GPUCatalog:
    return load_gpu_catalog(DATA_DIR)


@pytest.fixture(scope="module")
def models() -> ModelCatalog:
    return load_model_catalog(DATA_DIR)


@pytest.fixture(scope="module")
def engine(gpus: GPUCatalog) -> FitEngine:
    return FitEngine(gpus)


@pytest.fixture(scope="module")
def service() -> FitService:
    return fit_service()


def test_catalog_has_required_models(models: ModelCatalog) -> None:
    ids = {m.id for m in models.all()}
    assert len(ids) >= 30
    assert {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "qwen2.5-0.5b",
            "qwen2.5-72b", "qwen3-8b", "qwen3-30b-a3b", "mistral-7b", "mixtral-8x7b", "mixtral-8x22b",
            "gemma-2-9b", "phi-3-mini", "deepseek-v3", "deepseek-r1", "sdxl", "flux.1-dev", "flux.1-schnell",
            "sd-1.5", "whisper-large-v3", "whisper-large-v3-turbo"} <= ids


def test_tensor_parallel_splits_weights_and_kv(engine: FitEngine, gpus: GPUCatalog,
                                               models: ModelCatalog) -> None:
    h100, l70 = gpus.get("h100-sxm"), models.get("llama-3.1-70b")
    req = FitRequest(model=l70, gpu=h100, quant="q4_k_m", context=32768)
    one, two = engine.breakdown(req, h100, 1), engine.breakdown(replace(req, gpu_count=2), h100, 2)
    assert two.weights == pytest.approx(one.weights / 2)
    assert two.kv_cache == pytest.approx(one.kv_cache / 2)
    assert two.overhead > one.overhead  # collective buffers
    # 16-way TP of 8 KV heads: each GPU still holds one whole KV head (1/8 of the cache, not 1/16).
    sixteen = engine.breakdown(replace(req, gpu_count=16), h100, 16)
    assert sixteen.kv_cache == pytest.approx(one.kv_cache / 8)
    # MLA latent is replicated on every TP rank.
    ds = models.get("deepseek-v3")
    mla = FitRequest(model=ds, gpu=h100, quant="fp8", context=4096)
    assert engine.breakdown(mla, h100, 8).kv_cache == kv_cache_bytes(ds, 4096, 1, "f16")


def test_pipeline_parallel(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    a100, l70 = gpus.get("a100-80gb"), models.get("llama-3.1-70b")
    tp = FitRequest(model=l70, gpu=a100, gpu_count=4, parallel="tp")
    pp = replace(tp, parallel="pp")
    assert engine.breakdown(pp, a100, 4).weights == pytest.approx(engine.breakdown(tp, a100, 4).weights)
    # PP stages run one after another: no bandwidth pooling for one sequence.
    assert engine.decode_tokens_per_s(pp, a100, 4) < engine.decode_tokens_per_s(tp, a100, 4)  # type: ignore[operator]


def test_ddp_replicates_and_zero_shards(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    h100, l8 = gpus.get("h100-sxm"), models.get("llama-3.1-8b")
    base = FitRequest(model=l8, gpu=h100, mode="train", context=2048)
    ddp = engine.breakdown(replace(base, parallel="ddp", gpu_count=8), h100, 8)
    single = engine.breakdown(base, h100, 1)
    assert ddp.weights + ddp.gradients + ddp.optimizer == single.weights + single.gradients + single.optimizer
    zero1 = engine.breakdown(replace(base, parallel="zero1", gpu_count=8), h100, 8)
    zero3 = engine.breakdown(replace(base, parallel="zero3", gpu_count=8), h100, 8)
    assert zero1.optimizer == pytest.approx(single.optimizer / 8)
    assert zero3.total < zero1.total < ddp.total
    # DDP cannot make a model fit by adding GPUs: min_gpus is None, ZeRO-3 finds a count.
    big = FitRequest(model=models.get("llama-3.1-70b"), gpu=h100, mode="train", context=2048)
    assert engine.min_gpus(replace(big, parallel="ddp"), h100) is None
    assert engine.min_gpus(replace(big, parallel="zero3"), h100) is not None


def test_training_options(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    h100, l8 = gpus.get("h100-sxm"), models.get("llama-3.1-8b")
    base = FitRequest(model=l8, gpu=h100, mode="train", context=2048)
    adamw = engine.breakdown(base, h100, 1)
    assert adamw.weights + adamw.gradients + adamw.optimizer == 16 * l8.params
    bf16 = engine.breakdown(replace(base, optimizer="adamw_bf16"), h100, 1)
    eight = engine.breakdown(replace(base, optimizer="adam8bit"), h100, 1)
    assert bf16.optimizer < eight.optimizer < adamw.optimizer
    no_gc = engine.breakdown(replace(base, grad_checkpointing=False), h100, 1)
    assert no_gc.activations > 3 * adamw.activations
    lora = engine.breakdown(replace(base, mode="lora"), h100, 1)
    qlora = engine.breakdown(replace(base, mode="qlora"), h100, 1)
    assert qlora.weights < lora.weights / 2 < lora.weights < adamw.weights + adamw.optimizer
    r64 = engine.breakdown(replace(base, mode="lora", lora_rank=64), h100, 1)
    assert r64.optimizer == pytest.approx(4 * lora.optimizer)
    attn = engine.breakdown(replace(base, mode="lora", lora_targets="attn"), h100, 1)
    assert attn.optimizer < lora.optimizer


def test_limits_and_answers(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    rtx, q7 = gpus.get("rtx-4090"), models.get("qwen2.5-7b")
    result = engine.evaluate(FitRequest(model=q7, gpu=rtx, context=8192))
    assert result.fits and result.min_gpus == 1
    assert result.max_context is not None and 8192 < result.max_context <= q7.max_context
    # the longest context fits, one more token does not (unless it is the model's limit)
    assert engine.fits(FitRequest(model=q7, gpu=rtx, context=result.max_context), rtx, 1)
    if result.max_context < q7.max_context:
        assert not engine.fits(FitRequest(model=q7, gpu=rtx, context=result.max_context + 1), rtx, 1)
    assert result.max_batch is not None and result.max_batch >= 1
    assert not engine.fits(FitRequest(model=q7, gpu=rtx, context=8192, batch=result.max_batch + 1), rtx, 1)
    # bandwidth ceiling: 1008 GB/s over ~15.2 GB of weights + cache ≈ 64 tok/s
    assert result.decode_tokens_per_s == pytest.approx(1008e9 / (q7.params * 2 + result.kv_total), rel=1e-6)
    huge = engine.evaluate(FitRequest(model=models.get("llama-3.1-405b"), gpu=rtx))
    assert not huge.fits
    assert huge.min_gpus is not None and huge.min_gpus > 16  # 810 GB of bf16 weights over 24 GB cards
    never = engine.evaluate(FitRequest(model=models.get("llama-3.1-70b"), gpu=rtx, mode="train", gpu_count=8))
    assert not never.fits and never.min_gpus is None  # DDP replicas never pool memory
    assert any("Does not fit" in note for note in notes_en(never))
    assert any("not pooled" in note for note in notes_en(never))


def test_moe_decode_uses_active_params(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    h100 = gpus.get("h100-sxm")
    mixtral = FitRequest(model=models.get("mixtral-8x7b"), gpu=h100, gpu_count=2)
    dense = FitRequest(model=models.get("llama-3.1-70b"), gpu=h100, gpu_count=2)
    assert engine.decode_tokens_per_s(mixtral, h100, 2) > 3 * engine.decode_tokens_per_s(dense, h100, 2)  # type: ignore[operator]


def test_prices_rank_cheapest(gpus: GPUCatalog, models: ModelCatalog) -> None:
    prices = {"l40s": Decimal("0.10"), "h100-sxm": Decimal("5.00")}
    engine = FitEngine(gpus, prices)
    options = engine.cheapest(FitRequest(model=models.get("llama-3.1-70b"), quant="q4_k_m"))
    assert options[0].gpu_id == "l40s" and options[0].hourly_price == Decimal("0.10") * options[0].count
    assert all(o.hourly_price is not None for o in options)
    # a callable hook works too, and without prices the ranking is by memory
    by_call = FitEngine(gpus, lambda gpu_id: prices.get(gpu_id))
    assert by_call.cheapest(FitRequest(model=models.get("llama-3.1-70b"), quant="q4_k_m"))[0].gpu_id == "l40s"
    unpriced = FitEngine(gpus).cheapest(FitRequest(model=models.get("qwen2.5-0.5b")))
    assert unpriced[0].hourly_price is None


def test_json_contract_and_text(service: FitService) -> None:
    result = service.fit("llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4")
    payload = result_json(result)
    assert list(payload)[: len(CONTRACT_KEYS)] == CONTRACT_KEYS
    assert payload["fits"] is True and payload["gpu"] == "h100-sxm" and payload["gpu_count"] == 2
    assert payload["context"] == 32768 and payload["batch"] == 4 and payload["quant"] == "q4_k_m"
    # weights and KV are totals across GPUs; per-GPU total times count is the total
    assert payload["weights_gib"] == pytest.approx(result.weights_total / GIB, abs=0.01)
    assert payload["kv_cache_gib"] == pytest.approx(40.0, abs=0.01)  # 327,680 B/token x 32k x 4
    assert payload["total_gib"] == pytest.approx(2 * payload["per_gpu_gib"], abs=0.02)
    assert payload["per_gpu_gib"] <= payload["usable_per_gpu_gib"]
    assert isinstance(payload["notes"], list)
    text = render(result, "en")
    assert "Fits" in text and "KV cache" in text and "h100-sxm" in text
    html_text = render(service.fit("qwen2.5-7b на 4090"), "ru", markup=HTML)
    assert "<b>" in html_text and "Помещается" in html_text


def test_full_training_with_no_gpu_named_also_prices_the_lighter_methods(service: FitService) -> None:
    """«дообучить mistral 7b, какую карту брать»: full training needs a 192 GB card, LoRA a 24 GB one."""
    result = service.fit("mistral-7b train")
    assert not result.gpu_was_given and result.fits
    modes = [mode for mode, _ in result.lighter]
    assert modes == ["lora", "qlora"]
    full = result.per_gpu.total / GIB
    for mode, option in result.lighter:
        checked = service.fit(f"mistral-7b {mode} {option.gpu_id} x{option.count}")
        assert checked.fits and checked.per_gpu.total / GIB == pytest.approx(option.per_gpu_gib, abs=0.01)
        assert option.per_gpu_gib < full / 4 and option.hourly_price is not None
        assert option.hourly_price < result.cheapest[0].hourly_price  # cheaper than full training's card
    text = render(result, "en")
    assert "Cheaper: train adapters" in text and "LoRA (frozen base" in text
    assert [row["way"] for row in result_json(result)["lighter"]] == ["lora", "qlora"]
    # a GPU named, or adapters already asked: nothing added
    assert service.fit("mistral-7b train h200").lighter == []
    assert service.fit("mistral-7b lora").lighter == []


def test_serving_in_16_bits_with_no_gpu_named_also_prices_compressed_weights(service: FitService) -> None:
    """"cheapest way to serve qwen 2.5 72b?": a 192 GB card in BF16, one 48 GB card with 4-bit AWQ weights."""
    result = service.fit("qwen2.5-72b")
    ways = dict(result.lighter)
    assert set(ways) == {"fp8", "awq"}
    heavy = result.cheapest[0].hourly_price
    assert heavy is not None
    for way, option in result.lighter:
        checked = service.fit(f"qwen2.5-72b {way} {option.gpu_id} x{option.count}")
        assert checked.fits and checked.per_gpu.total / GIB == pytest.approx(option.per_gpu_gib, abs=0.01)
        assert option.hourly_price is not None and option.hourly_price < heavy
    assert "Cheaper with compressed weights" in render(result, "en")
    # a format asked, a GPU named, or a model already cheapest in 16 bits: nothing added
    assert service.fit("qwen2.5-72b fp16").lighter == []
    assert service.fit("qwen2.5-72b 2xh100").lighter == []
    assert all(option.hourly_price < result.cheapest[0].hourly_price  # type: ignore[operator]
               for result in [service.fit("llama-3.1-8b")] for _, option in result.lighter)


def test_missing_gpu_picks_cheapest_fitting(service: FitService) -> None:
    result = service.fit("qwen2.5-7b")
    assert not result.gpu_was_given and result.fits
    assert result.cheapest and result.gpu.id == result.cheapest[0].gpu_id
    assert any("No GPU given" in note for note in notes_en(result))


def test_diffusion_and_asr(service: FitService) -> None:
    sdxl = service.fit("sdxl 4 images 1024x1024 on 4090")
    tiled = service.fit("sdxl 4 images 1024x1024 on 4090 tiling slicing")
    assert tiled.per_gpu.activations < sdxl.per_gpu.activations
    assert result_json(sdxl)["mode"] == "diffusion"
    assert service.fit("flux.1-dev nf4 on l4").fits
    whisper = result_json(service.fit("whisper-large-v3 on l4"))
    assert whisper["mode"] == "asr" and whisper["fits"]


async def test_console_fit_command() -> None:
    import io

    from anchorgpu.console import ConsoleChat
    from app.services import Services
    from infra.settings import Settings

    out = io.StringIO()
    chat = ConsoleChat(Services.create(Settings()), lang="ru", out=out)
    await chat.handle("/fit влезет ли mixtral в две A100?")
    await chat.handle("/fit lama-3.1-70b")
    await chat.handle("/fit")
    text = out.getvalue()
    assert "Mixtral 8x7B" in text and "Помещается" in text
    assert "llama-3.1-70b" in text and "Возможно, вы имели в виду" in text
    assert "/fit qwen2.5-7b на 4090" in text  # usage
