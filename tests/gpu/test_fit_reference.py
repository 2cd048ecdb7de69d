"""The fit engine against public reference figures. Every figure cites its source; the figures and sources
are collected in /work/shared/reference/vram-figures.md.

Tolerances are the issue's targets: weights within 3 %, KV cache exact to the byte, totals within 15 %.
Measured totals from PyTorch (Qwen2.5 speed benchmark, diffusers) are allocator peaks, which never include
the CUDA context, so they are compared with weights + KV cache + activations (our runtime overhead is a
separate, documented line). Figures that are rough guidance rather than measurements are in
`test_guidance_figures_are_reported`, which checks the direction and keeps our error visible.
"""

from __future__ import annotations

import pytest

from gpu.catalog import GPUCatalog, load_gpu_catalog
from gpu.fit.architectures import ModelCatalog, ModelSpec, load_model_catalog
from gpu.fit.engine import (
    GIB,
    Breakdown,
    FitEngine,
    FitRequest,
    kv_bytes_per_token,
    kv_cache_bytes,
    weight_bytes,
)
from gpu.fit.quant import WEIGHT_FORMATS
from tests.conftest import DATA_DIR

GB = 1e9


@pytest.fixture(scope="module")
def gpus() -> GPUCatalog:
    return load_gpu_catalog(DATA_DIR)


@pytest.fixture(scope="module")
def models() -> ModelCatalog:
    return load_model_catalog(DATA_DIR)


@pytest.fixture(scope="module")
def engine(gpus: GPUCatalog) -> FitEngine:
    return FitEngine(gpus)


def allocated(b: Breakdown) -> float:
    """What a PyTorch allocator peak would show: everything but the runtime overhead."""
    return b.total - b.overhead


# ------------------------------------------------------------------------------------------ architecture


def test_architecture_values(models: ModelCatalog) -> None:
    # meta-llama/llama-models models/sku_list.py: hidden/layers/heads/KV heads/vocab/FFN, params.
    for model_id, hidden, layers, heads, ffn, params in (
        ("llama-3.1-8b", 4096, 32, 32, 14336, 8.03e9),
        ("llama-3.1-70b", 8192, 80, 64, 28672, 70.55e9),
        ("llama-3.1-405b", 16384, 126, 128, 53248, 405.85e9),
    ):
        m = models.get(model_id)
        assert (m.hidden, m.layers, m.heads, m.kv_heads, m.vocab, m.ffn) == (
            hidden, layers, heads, 8, 128256, ffn)
        assert m.params == pytest.approx(params, rel=0.001)
    # Qwen2.5-7B / 72B config.json; 72,706,203,648 params (model card).
    q7, q72 = models.get("qwen2.5-7b"), models.get("qwen2.5-72b")
    assert (q7.hidden, q7.ffn, q7.layers, q7.heads, q7.kv_heads, q7.vocab) == (3584, 18944, 28, 28, 4, 152064)
    assert (q72.hidden, q72.layers, q72.heads, q72.kv_heads, q72.ffn, q72.params) == (
        8192, 80, 64, 8, 29568, 72_706_203_648)
    # Mixtral paper / config.json: 8 experts, top-2, 46.7B total, ~12.9B active.
    mx = models.get("mixtral-8x7b")
    assert (mx.experts, mx.experts_active, mx.vocab) == (8, 2, 32000)
    assert mx.params == pytest.approx(46.7e9, rel=0.002)
    assert mx.params_active == pytest.approx(12.9e9, rel=0.01)
    # DeepSeek-V3 config.json: MLA kv_lora_rank 512 + rope 64 = 576 cached values per token per layer.
    ds = models.get("deepseek-v3")
    assert (ds.layers, ds.hidden, ds.heads, ds.experts, ds.shared_experts, ds.experts_active) == (
        61, 7168, 128, 256, 1, 8)
    assert ds.kv_values_per_token_layer() == 576
    # Gemma-2-9B config.json: 42 layers, 16 heads / 8 KV, head_dim 256, vocab 256000, alternating windows.
    gm = models.get("gemma-2-9b")
    assert (gm.layers, gm.heads, gm.kv_heads, gm.head_dim, gm.vocab, gm.sliding_layers) == (
        42, 16, 8, 256, 256000, 21)


def test_architecture_formula_reproduces_published_counts(models: ModelCatalog) -> None:
    """Our parameter formula (used for Qwen3 and uploaded configs) against published counts."""
    for model_id in ("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "qwen2.5-72b", "mistral-7b"):
        m = models.get(model_id)
        computed = ModelSpec(**{**m.__dict__, "params_total": None})
        assert computed.params == pytest.approx(m.params, rel=0.005), model_id
    # Qwen3 technical report: Qwen3-30B-A3B 30.5B total / 3.3B active; Qwen3-235B-A22B 235B / 22B.
    assert models.get("qwen3-30b-a3b").params == pytest.approx(30.5e9, rel=0.01)
    assert models.get("qwen3-30b-a3b").params_active == pytest.approx(3.3e9, rel=0.03)
    assert models.get("qwen3-235b-a22b").params == pytest.approx(235e9, rel=0.01)
    assert models.get("qwen3-235b-a22b").params_active == pytest.approx(22e9, rel=0.03)


# ------------------------------------------------------------------------------------------ weights


@pytest.mark.parametrize(("quant", "published_gib"), [
    # llama.cpp tools/quantize/README.md, Llama-3.1-8B
    ("q4_k_m", 4.58), ("q8_0", 7.95), ("q6_k", 6.14), ("q5_k_m", 5.33), ("q2_k", 2.95), ("f16", 14.96),
])
def test_gguf_weights_llama31_8b(models: ModelCatalog, quant: str, published_gib: float) -> None:
    ours = weight_bytes(models.get("llama-3.1-8b"), WEIGHT_FORMATS[quant]) / GIB
    assert ours == pytest.approx(published_gib, rel=0.03)


def test_gguf_weights_large_models(models: ModelCatalog) -> None:
    fmt = WEIGHT_FORMATS
    # llama.cpp quantize README: Llama-3.1-70B Q4_K_M 43.1 GB, 405B Q4_K_M 249.1 GB.
    assert weight_bytes(models.get("llama-3.1-70b"), fmt["q4_k_m"]) / GB == pytest.approx(43.1, rel=0.03)
    assert weight_bytes(models.get("llama-3.1-405b"), fmt["q4_k_m"]) / GB == pytest.approx(249.1, rel=0.03)
    # ollama PR #6279: Llama-3.1-70B Q4_0 37.22 GiB (Q4_0 = 18 B per 32 weights, ggml-common.h).
    assert weight_bytes(models.get("llama-3.1-70b"), fmt["q4_0"]) / GIB == pytest.approx(37.22, rel=0.03)
    # TheBloke Mixtral-8x7B-v0.1-GGUF: Q8_0 file 49.62 GB.
    assert weight_bytes(models.get("mixtral-8x7b"), fmt["q8_0"]) / GB == pytest.approx(49.62, rel=0.03)
    # "Q4" is not 4.0 bits: the old mistake would be 10 % low on the 8B.
    assert weight_bytes(models.get("llama-3.1-8b"), fmt["q4_k_m"]) > 1.2 * 8.03e9 * 4 / 8


def test_block_sizes() -> None:
    # ggml-common.h: Q4_0 is 18 bytes per 32 weights, Q8_0 34 bytes per 32.
    assert WEIGHT_FORMATS["q4_0"].bits == 18 * 8 / 32
    assert WEIGHT_FORMATS["q8_0"].bits == pytest.approx(34 * 8 / 32, abs=0.001)


def test_flux_transformer_weights(models: ModelCatalog) -> None:
    # diffusers bitsandbytes blog: FLUX.1-dev transformer (11.9B) 22.63 GB in bf16, 6.72 GB in NF4.
    transformer = dict(models.get("flux.1-dev").components)["transformer"]
    assert transformer * 2 / GIB == pytest.approx(22.63, rel=0.03)
    assert transformer * WEIGHT_FORMATS["nf4_nodq"].bits / 8 / GB == pytest.approx(6.72, rel=0.03)


# ------------------------------------------------------------------------------------------ KV cache


def test_kv_cache_exact(models: ModelCatalog) -> None:
    l8, l70 = models.get("llama-3.1-8b"), models.get("llama-3.1-70b")
    # vllm-project/vllm#12330: Llama-3-8B KV cache is 131,072 bytes per token (2 x 32 x 8 x 128 x 2).
    assert kv_bytes_per_token(models.get("llama-3-8b"), "f16") == 131_072
    # HF blog "llama31": fp16 KV cache at 128k tokens — 8B 15.62 GB, 70B 39.06 GB (GiB of 128,000 tokens).
    assert kv_cache_bytes(l8, 128_000, 1, "f16") == 2 * 32 * 8 * 128 * 2 * 128_000
    assert round(kv_cache_bytes(l8, 128_000, 1, "f16") / GIB, 2) == pytest.approx(15.62, abs=0.01)
    assert round(kv_cache_bytes(l70, 128_000, 1, "f16") / GIB, 2) == pytest.approx(39.06, abs=0.01)
    # Cache dtypes: fp8 halves it; q8_0 / q4_0 use 34 / 18 bytes per 32 values (ggml-common.h).
    assert kv_cache_bytes(l8, 4096, 2, "fp8") == 2 * 32 * 8 * 128 * 1 * 4096 * 2
    assert kv_cache_bytes(l8, 4096, 1, "q8_0") == 2 * 32 * 8 * 128 * 4096 // 32 * 34
    assert kv_cache_bytes(l8, 4096, 1, "q4_0") == 2 * 32 * 8 * 128 * 4096 // 32 * 18


def test_kv_mla_and_sliding_windows(models: ModelCatalog) -> None:
    ds = models.get("deepseek-v3")
    # DeepSeek-V3 config.json: 61 layers x (512 + 64) values x 2 bytes per token.
    assert kv_cache_bytes(ds, 1000, 1, "f16") == 61 * 576 * 2 * 1000
    gemma = models.get("gemma-2-9b")
    # Gemma 2: 21 global layers keep the whole context, 21 local layers only the last 4096 tokens.
    per_layer_token = 2 * 8 * 256 * 2
    assert kv_cache_bytes(gemma, 8192, 1, "f16") == (21 * 8192 + 21 * 4096) * per_layer_token
    assert kv_cache_bytes(gemma, 2048, 1, "f16") == 42 * 2048 * per_layer_token


# ------------------------------------------------------------------------------------------ measured totals


def test_qwen25_speed_benchmark(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """Qwen2.5 speed benchmark (qwen.readthedocs.io, A100-80GB, HF transformers, batch 1)."""
    a100 = gpus.get("a100-80gb")
    q7 = models.get("qwen2.5-7b")
    for context, measured in ((1, 14.38), (30720, 19.97)):
        # transformers prefills the whole prompt at once
        req = FitRequest(model=q7, gpu=a100, context=context, prefill=context)
        assert allocated(engine.breakdown(req, a100, 1)) / GIB == pytest.approx(measured, rel=0.15)
    awq = FitRequest(model=q7, gpu=a100, context=1, prefill=1, quant="awq")
    assert allocated(engine.breakdown(awq, a100, 1)) / GIB == pytest.approx(5.39, rel=0.15)
    q72 = models.get("qwen2.5-72b")
    per_gpu = engine.breakdown(FitRequest(model=q72, gpu=a100, gpu_count=2, context=1, prefill=1), a100, 2)
    assert 2 * allocated(per_gpu) / GIB == pytest.approx(136.20, rel=0.15)


def test_vllm_profile_llama3_8b(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """vllm-project/vllm PR #10511 profile of Llama-3-8B on H100: weights 14.96 GiB, activation peak 1.26,
    non-torch 1.79 GiB (max_model_len 8192 prefilled at once, 256 sequences sampled)."""
    h100 = gpus.get("h100-sxm")
    b = engine.breakdown(FitRequest(model=models.get("llama-3-8b"), gpu=h100, context=8192, batch=256,
                                    prefill=8192), h100, 1)
    assert b.weights / GIB == pytest.approx(14.96, rel=0.03)
    assert (b.weights + b.activations + b.overhead) / GIB == pytest.approx(14.96 + 1.26 + 1.79, rel=0.15)
    # vllm-project/vllm#12330, A100-40GB: usable 39.50 x 0.90 = 35.55 GiB.
    a40 = gpus.get("a100-40gb")
    assert engine.usable(FitRequest(model=models.get("llama-3-8b"), utilization=0.9), a40) / GIB == \
        pytest.approx(35.55, abs=0.01)


def test_lora_qlora_llama_factory(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """LLaMA-Factory benchmark, Qwen2-7B (same shape as Qwen2.5-7B), cutoff 1024, batch 1:
    LoRA r16 20.17 GB, QLoRA 10.97 GB (gradient checkpointing is LLaMA-Factory's default)."""
    a100 = gpus.get("a100-80gb")
    q7 = models.get("qwen2.5-7b")
    for mode, measured in (("lora", 20.17), ("qlora", 10.97)):
        req = FitRequest(model=q7, gpu=a100, mode=mode, context=1024, batch=1, lora_rank=16)  # type: ignore[arg-type]
        assert engine.breakdown(req, a100, 1).total / GB == pytest.approx(measured, rel=0.15)


def test_zero_model_states_t5_3b(engine: FitEngine, gpus: GPUCatalog) -> None:
    """DeepSpeed docs memory.rst: t5-3b on 1 node x 8 GPUs — ZeRO-2 15.93 GB/GPU, ZeRO-3 6.10 GB/GPU
    (model states: params, grads, optimizer)."""
    t5 = ModelSpec(id="t5-3b", name="t5-3b", params_total=2_851_598_336, layers=24, hidden=1024, heads=32,
                   kv_heads=32, head_dim=128, vocab=32128, ffn=16384)
    a100 = gpus.get("a100-80gb")
    for parallel, published in (("zero2", 15.93), ("zero3", 6.10)):
        req = FitRequest(model=t5, gpu=a100, gpu_count=8, mode="train", parallel=parallel)  # type: ignore[arg-type]
        b = engine.breakdown(req, a100, 8)
        assert (b.weights + b.gradients + b.optimizer) / GIB == pytest.approx(published, rel=0.03)
    # Mixed-precision AdamW without sharding: 16 bytes per parameter (2 + 2 + 12).
    b = engine.breakdown(FitRequest(model=t5, gpu=a100, mode="train"), a100, 1)
    assert b.weights + b.gradients + b.optimizer == 16 * 2_851_598_336


def test_sdxl_vae_decode_peak(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """diffusers memory docs: SDXL fp16, 4 images at 1024^2 on A100 — 21.72 GB; with VAE slicing 15.40 GB.
    (Our two activation coefficients are fitted to this pair; the test guards the model's structure.)"""
    a100, sdxl = gpus.get("a100-80gb"), models.get("sdxl")
    plain = engine.breakdown(FitRequest(model=sdxl, gpu=a100, images=4, quant="fp16"), a100, 1)
    sliced = engine.breakdown(FitRequest(model=sdxl, gpu=a100, images=4, quant="fp16", vae_slicing=True),
                              a100, 1)
    tiled = engine.breakdown(FitRequest(model=sdxl, gpu=a100, images=4, quant="fp16", vae_tiling=True,
                                        vae_slicing=True), a100, 1)
    assert allocated(plain) / GIB == pytest.approx(21.72, rel=0.15)
    assert allocated(sliced) / GIB == pytest.approx(15.40, rel=0.15)
    assert (plain.activations - sliced.activations) / GIB == pytest.approx(6.3, rel=0.15)  # "~6 GB"
    assert tiled.activations <= sliced.activations


def test_faster_whisper(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """SYSTRAN/faster-whisper README benchmark, large-v2 beam 5 on GPU: fp16 4,755 MB, int8 3,091 MB
    (nvidia-smi MiB, so the runtime overhead is included)."""
    a100, whisper = gpus.get("a100-80gb"), models.get("whisper-large-v3")
    for quant, measured_mib in (("fp16", 4755), ("int8", 3091)):
        b = engine.breakdown(FitRequest(model=whisper, gpu=a100, quant=quant, beam=5), a100, 1)
        assert b.total / 2**20 == pytest.approx(measured_mib, rel=0.15)


def test_guidance_figures_are_reported(engine: FitEngine, gpus: GPUCatalog, models: ModelCatalog) -> None:
    """Rounded guidance, not measurements — checked loosely, errors listed in the closing report.
    HF blog "llama31": LoRA/QLoRA 70B 160/48 GB. vLLM #6746: 405B FP8 TP8 57.75 GB weights per GPU
    (Meta's FP8 checkpoint keeps attention in BF16; our generic FP8 keeps only embeddings/head wide)."""
    a100, h100 = gpus.get("a100-80gb"), gpus.get("h100-sxm")
    l70 = models.get("llama-3.1-70b")
    lora = engine.breakdown(FitRequest(model=l70, gpu=a100, mode="lora", context=512), a100, 1)
    qlora = engine.breakdown(FitRequest(model=l70, gpu=a100, mode="qlora", context=512), a100, 1)
    assert lora.total / GB == pytest.approx(160, rel=0.15)
    assert qlora.total / GB == pytest.approx(48, rel=0.15)
    fp8 = engine.breakdown(FitRequest(model=models.get("llama-3.1-405b"), gpu=h100, gpu_count=8, quant="fp8"),
                           h100, 8)
    assert fp8.weights / GB == pytest.approx(57.75, rel=0.15)
