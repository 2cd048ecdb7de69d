"""The VRAM fit engine: per-GPU memory for a model, a workload and a GPU configuration. Pure and fast.

Per GPU: weights + KV cache + activations/compute buffers + runtime overhead, against usable memory.

Documented constants
- RUNTIME_OVERHEAD_GIB (0.75 GiB per GPU): CUDA context and kernels (0.3-0.5 GiB with lazy loading),
  cuBLAS/cuDNN workspaces and allocator slack that never appear in a framework's tensor accounting.
- COLLECTIVE_OVERHEAD_GIB (0.25 GiB per GPU when GPUs talk): NCCL/RCCL communicator buffers.
- DEFAULT_UTILIZATION (0.95): the fraction of the device-visible total a job can plan to use; the rest
  absorbs fragmentation of the caching allocator (vLLM defaults to 0.90 for the same reason).
- Prefill: a serving engine processes prompts in chunks (vLLM's max_num_batched_tokens, llama.cpp's
  n_batch); activations are sized for DEFAULT_PREFILL_TOKENS tokens at once unless `prefill` says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Literal

from gpu.catalog import GPUCatalog, GPUSpec
from gpu.fit.architectures import ModelSpec
from gpu.fit.quant import KV_DTYPES, Q6_K_BPW, WEIGHT_FORMATS, WeightFormat
from infra.i18n import Phrase

GIB = 2**30
RUNTIME_OVERHEAD_GIB = 0.75
COLLECTIVE_OVERHEAD_GIB = 0.25
DEFAULT_UTILIZATION = 0.95
DEFAULT_PREFILL_TOKENS = 8192
DEFAULT_CONTEXT = 8192
GPU_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
MAX_GPUS = 64
# Diffusion activation coefficients (GiB per megapixel per image in the batch), fitted to the diffusers
# SDXL measurement (4 images 1024^2: 21.72 GB, 15.40 GB with VAE slicing); see tests/gpu/test_fit_reference.
DENOISER_GIB_PER_MP = 1.07
VAE_DECODE_GIB_PER_MP = 3.64
VAE_TILE_MP = 0.25  # diffusers tiles VAE decode in 512x512 pieces
LOGIT_BYTES_TRAIN = 14  # bf16 logits + fp32 upcast + fp32 grad + log-softmax, per vocab entry per token

Mode = Literal["inference", "train", "lora", "qlora"]
Parallel = Literal["tp", "pp", "ddp", "zero1", "zero2", "zero3", "fsdp"]
Optimizer = Literal["adamw", "adamw_bf16", "adam8bit"]
PriceLookup = Callable[[str], Decimal | None]


@dataclass(frozen=True)
class FitRequest:
    model: ModelSpec
    gpu: GPUSpec | None = None
    gpu_count: int = 1
    mode: Mode = "inference"
    quant: str = "bf16"
    kv_dtype: str = "f16"
    context: int | None = None
    batch: int = 1
    parallel: Parallel | None = None
    optimizer: Optimizer = "adamw"
    grad_checkpointing: bool = True
    lora_rank: int = 16
    lora_targets: Literal["all", "attn"] = "all"
    prefill: int | None = None
    utilization: float = DEFAULT_UTILIZATION
    images: int = 1
    resolution: int | None = None
    vae_tiling: bool = False
    vae_slicing: bool = False
    beam: int = 5
    count_given: bool = False
    training_asked: bool = False  # a training or LoRA asked of a model whose training is not computed here
    quant_given: bool = False  # the weight format was asked ("в fp16", "awq"), not the model's default

    @property
    def effective_context(self) -> int:
        if self.model.kind == "asr":
            return self.model.text_ctx
        if self.context is not None:
            return self.context
        default = 2048 if self.mode != "inference" else DEFAULT_CONTEXT
        return min(default, self.model.max_context)

    @property
    def effective_parallel(self) -> Parallel:
        if self.parallel:
            return self.parallel
        return "tp" if self.mode == "inference" else "ddp"


@dataclass(frozen=True)
class Breakdown:
    """Bytes on ONE GPU (the most loaded one)."""

    weights: float
    kv_cache: float
    activations: float
    overhead: float
    gradients: float = 0.0
    optimizer: float = 0.0

    @property
    def total(self) -> float:
        return (self.weights + self.kv_cache + self.activations + self.overhead
                + self.gradients + self.optimizer)


@dataclass(frozen=True)
class Option:
    gpu_id: str
    gpu_name: str
    count: int
    per_gpu_gib: float
    usable_gib: float
    hourly_price: Decimal | None


LighterWay = Literal["lora", "qlora", "fp8", "awq"]
# 16-bit weights served: what a cheaper configuration may use instead (vLLM serves both on the GPUs rented here)
LIGHTER_FORMATS: tuple[Literal["fp8", "awq"], ...] = ("fp8", "awq")
SuggestionKind = Literal["quant", "context", "kv_dtype", "gpus", "offload", "fsdp", "lora", "qlora"]


DIFFUSION_SMALLER = ("fp8", "nf4")  # the smaller weight formats a diffusion model is commonly loaded in


@dataclass(frozen=True)
class Suggestion:
    """One change that makes a request fit (or, with ``fits`` false, the closest it gets)."""

    kind: SuggestionKind
    value: str | int
    fits: bool
    per_gpu_gib: float
    layers: int | None = None  # offload: the model's layer count (value is the layers kept on the GPU)
    quant: str | None = None  # offload: the GGUF type the layers are counted in


# Weight formats from best to most lossy, the ladder "a quant that fits" walks down.
QUANT_LADDER = ("fp8", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "awq", "q3_k_m", "q2_k", "iq2_xxs")
KV_LADDER = ("fp8", "q8_0", "q4_0")


@dataclass
class FitResult:
    request: FitRequest
    gpu: GPUSpec
    per_gpu: Breakdown
    usable_bytes: float
    fits: bool
    weights_total: float
    kv_total: float
    min_gpus: int | None = None
    max_context: int | None = None
    max_batch: int | None = None
    decode_tokens_per_s: float | None = None
    cheapest: list[Option] = field(default_factory=list)
    notes: list[Phrase] = field(default_factory=list)
    gpu_was_given: bool = True
    rentable: bool = True  # AnchorGPU rents this GPU (it has a price in prices.yaml)
    suggestions: list[Suggestion] = field(default_factory=list)
    # no GPU named and the heavy default taken: the cheapest configuration of each lighter way, where it costs less.
    # Full training («дообучить mistral 7b, какую карту брать»): LoRA and QLoRA (a 7B needs a 192 GB card for full
    # training, a 24 GB one for LoRA). Serving in 16 bits with no format asked ("cheapest way to serve qwen 2.5
    # 72b?"): FP8 and 4-bit AWQ weights. Empty otherwise.
    lighter: list[tuple[LighterWay, Option]] = field(default_factory=list)

    @property
    def headroom_bytes(self) -> float:
        return self.usable_bytes - self.per_gpu.total


# ------------------------------------------------------------------------------------------ weights


def weight_bytes(model: ModelSpec, fmt: WeightFormat) -> float:
    """Whole-model weight bytes in the given format (all GPUs together)."""
    params = model.params
    if model.gguf_bits and fmt.kind in ("gguf_mix", "gguf_block") and model.native_quant == fmt.name:
        return params * model.gguf_bits / 8  # the uploaded file's own measured size
    if fmt.kind in ("float", "gguf_mix"):
        return params * fmt.bits / 8
    if fmt.kind == "gguf_block":
        # llama.cpp keeps the output matrix (the embedding when tied) as Q6_K for these types.
        head = model.vocab * model.hidden
        return params * fmt.bits / 8 + head * max(Q6_K_BPW - fmt.bits, 0) / 8
    if fmt.kind == "experts_only" and model.experts:
        experts = min(model.routed_expert_params, params)
        return experts * fmt.bits / 8 + (params - experts) * 2
    # group-quantized and bitsandbytes formats quantize the blocks' linear layers only.
    wide = model.embedding_params + model.head_params
    return model.linear_params * fmt.bits / 8 + wide * 2


def diffusion_weight_bytes(model: ModelSpec, fmt: WeightFormat) -> float:
    total = 0.0
    for name, count in model.components:
        if name in ("unet", "transformer"):
            total += count * fmt.bits / 8
        else:
            total += count * 2  # text encoders and the VAE stay fp16/bf16
    return total


# ------------------------------------------------------------------------------------------ KV cache


def kv_cache_bytes(model: ModelSpec, context: int, batch: int, kv_dtype: str) -> float:
    """Exact cache bytes: per layer, cached tokens x values per token x dtype size, summed over layers."""
    if model.kind != "llm":
        return 0.0
    per_value = KV_DTYPES[kv_dtype].bytes_per_value
    values = model.kv_values_per_token_layer()
    windowed = min(model.sliding_layers, model.layers) if model.sliding_window else 0
    full_layers = model.layers - windowed
    tokens_windowed = min(context, model.sliding_window) if windowed else 0
    return (full_layers * context + windowed * tokens_windowed) * values * per_value * batch


def kv_bytes_per_token(model: ModelSpec, kv_dtype: str) -> float:
    return model.layers * model.kv_values_per_token_layer() * KV_DTYPES[kv_dtype].bytes_per_value


# ------------------------------------------------------------------------------------------ engine


def tp_divides(model: ModelSpec, count: int) -> bool:
    """Tensor parallelism splits attention heads evenly; KV heads are split or, past their number,
    replicated whole (vLLM: kv_heads % tp == 0 or tp % kv_heads == 0). An MLA latent is not split."""
    if count <= 1 or not model.heads:
        return True
    if model.heads % count:
        return False
    kv = model.kv_heads or model.heads
    return model.is_mla or kv % count == 0 or count % kv == 0


def nearest_tp_sizes(model: ModelSpec, count: int) -> list[int]:
    """The valid tensor-parallel sizes closest to ``count`` (one below and one above where they exist)."""
    valid = [n for n in GPU_COUNTS if tp_divides(model, n)]
    below = [n for n in valid if n < count]
    above = [n for n in valid if n > count]
    return ([below[-1]] if below else []) + ([above[0]] if above else [])


class _InferenceCost:
    """Per-GPU inference memory as a function of (context, batch), constants computed once, so the
    longest-context and concurrency searches cost a few multiplications per step."""

    def __init__(self, req: FitRequest, count: int, overhead: float) -> None:
        model = req.model
        self.model = model
        self.kv_dtype = req.kv_dtype
        self.weights = weight_bytes(model, WEIGHT_FORMATS[req.quant]) / count
        self.overhead = overhead
        parallel = req.effective_parallel
        if parallel == "tp" and count > 1:
            # the MLA latent is shared by all heads, so every TP rank holds all of it; GQA KV heads are
            # split across ranks but replicate once there are more ranks than KV heads
            self.kv_share = 1.0 if model.is_mla else math.ceil(model.kv_heads / count) / model.kv_heads
        else:
            self.kv_share = 1.0 / count
        self.prefill = req.prefill
        ffn_width = model.ffn
        if model.experts:
            ffn_width = (model.experts_active + model.shared_experts) * model.moe_ffn
        q_width = (model.heads + 2 * model.kv_heads) * model.head_dim
        split = count if parallel == "tp" else 1
        self.per_token = (4 * model.hidden + (q_width + 3 * ffn_width) / split) * 2
        self.logit_row = model.vocab * 4 * 2  # fp32 logits + probabilities for each sampled row

    def breakdown(self, context: int, batch: int) -> Breakdown:
        kv = kv_cache_bytes(self.model, context, batch, self.kv_dtype) * self.kv_share
        prefill = self.prefill or min(context * batch, DEFAULT_PREFILL_TOKENS)
        activations = prefill * self.per_token + batch * self.logit_row
        return Breakdown(weights=self.weights, kv_cache=kv, activations=activations, overhead=self.overhead)

    def total(self, context: int, batch: int) -> float:
        return self.breakdown(context, batch).total


class _Override:
    """A request seen with another context/batch, without the cost of dataclasses.replace."""

    __slots__ = ("_req", "batch", "context")

    def __init__(self, req: FitRequest, context: int, batch: int) -> None:
        self._req, self.context, self.batch = req, context, batch

    @property
    def effective_context(self) -> int:
        return self.context

    def __getattr__(self, name: str) -> object:
        return getattr(self._req, name)


class FitEngine:
    def __init__(self, gpus: GPUCatalog, prices: PriceLookup | Mapping[str, Decimal] | None = None) -> None:
        self.gpus = gpus
        # without a price list (tools, tests) every catalog GPU counts as rentable
        self._has_prices = prices is not None
        if isinstance(prices, Mapping):
            table = dict(prices)
            self._price: PriceLookup = table.get
        else:
            self._price = prices or (lambda _gpu_id: None)

    def rentable(self, gpu_id: str) -> bool:
        """AnchorGPU rents a GPU exactly when the price list has a price for it."""
        return not self._has_prices or self._price(gpu_id) is not None

    # ---- the per-GPU breakdown for one configuration ----
    def breakdown(self, req: FitRequest, gpu: GPUSpec | None, count: int, *, context: int | None = None,
                  batch: int | None = None) -> Breakdown:
        """Per-GPU bytes; `context`/`batch` override the request's (the limit searches vary them)."""
        model = req.model
        if context is not None or batch is not None:
            ctx = context if context is not None else req.effective_context
            req = _Override(req, ctx, batch if batch is not None else req.batch)  # type: ignore[assignment]
        overhead = RUNTIME_OVERHEAD_GIB * GIB + (COLLECTIVE_OVERHEAD_GIB * GIB if count > 1 else 0.0)
        if model.kind == "diffusion":
            return self._diffusion(req, overhead)
        if model.kind == "asr":
            return self._asr(req, overhead)
        if req.mode == "inference":
            return self._inference(req, count, overhead)
        return self._training(req, count, overhead)

    def _inference(self, req: FitRequest, count: int, overhead: float) -> Breakdown:
        return _InferenceCost(req, count, overhead).breakdown(req.effective_context, req.batch)

    def _training(self, req: FitRequest, count: int, overhead: float) -> Breakdown:
        model = req.model
        params = model.params
        seq, micro = req.effective_context, req.batch
        parallel = req.effective_parallel
        shards = count if parallel in ("zero3", "fsdp") else 1
        opt_shards = count if parallel in ("zero1", "zero2", "zero3", "fsdp") else 1
        grad_shards = count if parallel in ("zero2", "zero3", "fsdp") else 1
        gradients = optimizer = 0.0
        if req.mode == "train":
            weights = params * 2.0
            if parallel == "zero2":
                # DeepSpeed's estimator: fp16 grads live in full during backward, plus the fp32 partition.
                gradients = params * 2.0 + params * 4.0 / count
                optimizer = params * 12.0 / count
            elif parallel in ("zero3", "fsdp"):
                largest = max(model.vocab * model.hidden, model.hidden * max(model.ffn, model.moe_ffn))
                weights = params * 2.0 / shards + largest * 2.0
                gradients = params * 4.0 / count + largest * 2.0
                optimizer = params * 12.0 / count
            else:
                gradients = params * 2.0 / grad_shards
                per_param_opt = {"adamw": 12.0, "adamw_bf16": 4.0, "adam8bit": 6.0}[req.optimizer]
                optimizer = params * per_param_opt / opt_shards
        else:
            fmt = WEIGHT_FORMATS["nf4" if req.mode == "qlora" else req.quant]
            weights = weight_bytes(model, fmt) / shards
            trainable = self.lora_params(model, req.lora_rank, req.lora_targets)
            gradients = trainable * 2.0
            optimizer = trainable * 12.0 / opt_shards + trainable * 2.0
            if req.mode == "qlora":
                # one layer's weights dequantized to bf16 on the fly
                weights += (model.linear_params / max(model.layers, 1)) * 2.0
        tokens = seq * micro
        per_layer_token = 17 * model.hidden + 6 * (
            (model.experts_active + model.shared_experts) * model.moe_ffn if model.experts else model.ffn)
        if req.grad_checkpointing:
            saved = tokens * model.layers * model.hidden * 2 + tokens * per_layer_token
        else:
            saved = tokens * model.layers * per_layer_token
        activations = saved + tokens * model.vocab * LOGIT_BYTES_TRAIN
        return Breakdown(weights=weights, kv_cache=0.0, activations=activations, overhead=overhead,
                         gradients=gradients, optimizer=optimizer)

    @staticmethod
    def lora_params(model: ModelSpec, rank: int, targets: str) -> float:
        q, kv = model.heads * model.head_dim, model.kv_heads * model.head_dim
        h = model.hidden
        attn = (h + q) + 2 * (h + kv) + (q + h)
        ffn = model.moe_ffn if model.experts else model.ffn
        mlp = 3 * (h + ffn) * (model.experts or 1) if targets == "all" else 0
        return float(rank * (attn + mlp) * model.layers)

    def _diffusion(self, req: FitRequest, overhead: float) -> Breakdown:
        model = req.model
        fmt = WEIGHT_FORMATS[req.quant]
        weights = diffusion_weight_bytes(model, fmt)
        side = req.resolution or model.resolution
        megapixels = side * side / 1e6
        cfg = 1 if "flux" in model.id else 2  # FLUX is guidance-distilled; SD runs cond + uncond
        denoiser = req.images * cfg * megapixels * DENOISER_GIB_PER_MP * GIB
        decoded_at_once = 1 if req.vae_slicing else req.images
        if req.vae_tiling:
            vae = decoded_at_once * min(megapixels, VAE_TILE_MP) * VAE_DECODE_GIB_PER_MP * GIB
        else:
            vae = decoded_at_once * megapixels * VAE_DECODE_GIB_PER_MP * GIB
        return Breakdown(weights=weights, kv_cache=0.0, activations=max(denoiser, vae), overhead=overhead)

    def _asr(self, req: FitRequest, overhead: float) -> Breakdown:
        model = req.model
        fmt = WEIGHT_FORMATS[req.quant]
        weights = model.params * fmt.bits / 8
        d, beams = model.hidden, req.beam * req.batch
        # decoder self-attention cache per beam, cross-attention K/V once per audio window
        kv = (beams * model.text_ctx + req.batch * model.audio_ctx) * model.layers * 2 * d * 2
        encoder = req.batch * (model.audio_ctx * d * 2 * 12 + model.heads * model.audio_ctx**2 * 2)
        return Breakdown(weights=weights, kv_cache=kv, activations=encoder, overhead=overhead)

    # ---- feasibility questions ----
    def usable(self, req: FitRequest, gpu: GPUSpec) -> float:
        return gpu.memory_gib * GIB * req.utilization

    def fits(self, req: FitRequest, gpu: GPUSpec, count: int, *, context: int | None = None,
             batch: int | None = None) -> bool:
        return self.breakdown(req, gpu, count, context=context, batch=batch).total <= self.usable(req, gpu)

    def _fits_fn(self, req: FitRequest, count: int, usable: float) -> Callable[[int, int], bool]:
        overhead = RUNTIME_OVERHEAD_GIB * GIB + (COLLECTIVE_OVERHEAD_GIB * GIB if count > 1 else 0.0)
        if req.model.kind == "llm" and req.mode == "inference":
            cost = _InferenceCost(req, count, overhead)
            return lambda context, batch: cost.total(context, batch) <= usable
        return lambda context, batch: self.breakdown(req, None, count, context=context,
                                                     batch=batch).total <= usable

    def _totals(self, req: FitRequest) -> list[tuple[int, float]]:
        """Per-GPU total for each allowed GPU count; it does not depend on the GPU model."""
        return [(count, self.breakdown(req, None, count).total) for count in self.valid_counts(req)]

    def valid_counts(self, req: FitRequest) -> list[int]:
        model = req.model
        if model.kind != "llm" or req.effective_parallel == "ddp":
            return [1]
        if req.effective_parallel == "tp" and model.heads:
            return [n for n in GPU_COUNTS if tp_divides(model, n)]
        return list(GPU_COUNTS)

    def min_gpus(self, req: FitRequest, gpu: GPUSpec,
                 totals: list[tuple[int, float]] | None = None) -> int | None:
        usable = self.usable(req, gpu)
        for count, total in totals if totals is not None else self._totals(req):
            if total <= usable:
                return count
        return None

    def max_context(self, req: FitRequest, gpu: GPUSpec, count: int) -> int | None:
        if req.model.kind != "llm":
            return None
        usable = self.usable(req, gpu)
        fits = self._fits_fn(req, count, usable)
        low, high = 0, req.model.max_context
        while low < high:
            mid = (low + high + 1) // 2
            if fits(mid, req.batch):
                low = mid
            else:
                high = mid - 1
        return low or None

    def max_batch(self, req: FitRequest, gpu: GPUSpec, count: int, limit: int = 4096) -> int | None:
        if req.model.kind != "llm" or req.mode != "inference":
            return None
        fits = self._fits_fn(req, count, self.usable(req, gpu))
        context = req.effective_context
        low, high = 0, limit
        while low < high:
            mid = (low + high + 1) // 2
            if fits(context, mid):
                low = mid
            else:
                high = mid - 1
        return low or None

    def decode_tokens_per_s(self, req: FitRequest, gpu: GPUSpec, count: int) -> float | None:
        """Bandwidth ceiling for one sequence: every decode step streams the active weights and the cache."""
        model = req.model
        if model.kind != "llm" or req.mode != "inference":
            return None
        fmt = WEIGHT_FORMATS[req.quant]
        active = weight_bytes(model, fmt) * model.params_active / model.params
        kv = kv_cache_bytes(model, req.effective_context, req.batch, req.kv_dtype)
        parallel_read = count if req.effective_parallel == "tp" else 1
        seconds = (active + kv) / parallel_read / (gpu.bandwidth_gb_s * 1e9)
        return 1.0 / seconds if seconds > 0 else None

    def cheapest(self, req: FitRequest, limit: int = 3,
                 totals: list[tuple[int, float]] | None = None) -> list[Option]:
        options: list[Option] = []
        totals = totals if totals is not None else self._totals(req)
        by_count = dict(totals)
        for gpu in self.gpus.all():
            count = self.min_gpus(req, gpu, totals)
            if count is None:
                continue
            unit = self._price(gpu.id)
            price = unit * count if unit is not None else None
            per_gpu = by_count[count] / GIB
            options.append(Option(gpu.id, gpu.name, count, per_gpu, self.usable(req, gpu) / GIB, price))
        priced = [o for o in options if o.hourly_price is not None]
        if priced:
            priced.sort(key=lambda o: (o.hourly_price or Decimal(0), o.count))
            return priced[:limit]
        options.sort(key=lambda o: (o.count * self.gpus.get(o.gpu_id).memory_gib, o.count))
        return options[:limit]

    # ---- the full answer ----
    def evaluate(self, req: FitRequest) -> FitResult:
        gpu_given = req.gpu is not None
        totals = self._totals(req)
        options = self.cheapest(req, limit=len(self.gpus.all()), totals=totals)
        if req.gpu is not None:
            gpu = req.gpu
        elif options:
            gpu = self.gpus.get(options[0].gpu_id)
            req = replace(req, gpu=gpu, gpu_count=options[0].count)
        else:
            rentable = [g for g in self.gpus.all() if self.rentable(g.id)] or self.gpus.all()
            gpu = max(rentable, key=lambda g: g.memory_gib)
            req = replace(req, gpu=gpu)
        count = req.gpu_count
        per_gpu = self.breakdown(req, gpu, count)
        usable = self.usable(req, gpu)
        result = FitResult(
            request=req, gpu=gpu, per_gpu=per_gpu, usable_bytes=usable, fits=per_gpu.total <= usable,
            weights_total=self._weights_total(req),
            kv_total=kv_cache_bytes(req.model, req.effective_context, req.batch, req.kv_dtype)
            if req.mode == "inference" else 0.0,
            min_gpus=self.min_gpus(req, gpu, totals), gpu_was_given=gpu_given, rentable=self.rentable(gpu.id),
        )
        result.max_context = self.max_context(req, gpu, count)
        result.max_batch = self.max_batch(req, gpu, count)
        result.decode_tokens_per_s = self.decode_tokens_per_s(req, gpu, count)
        result.cheapest = options[:3]
        if not result.fits:
            result.suggestions = self.suggestions(req, gpu, result)
        if not gpu_given and req.model.kind == "llm":
            result.lighter = self.lighter_options(req, result.cheapest[0] if result.cheapest else None)
        result.notes = self._notes(req, result)
        return result

    def lighter_options(self, req: FitRequest, heavy: Option | None) -> list[tuple[LighterWay, Option]]:
        """The cheapest configuration of each lighter way that fits and costs less than ``heavy`` (the request's
        own cheapest): adapters instead of full training (LoRA; QLoRA on a 4-bit base), or, serving 16-bit
        weights with no format asked, FP8 or 4-bit AWQ weights."""
        ways: list[tuple[LighterWay, FitRequest]] = []
        if req.mode == "train":
            ways = [("lora", replace(req, mode="lora", parallel=None)),
                    ("qlora", replace(req, mode="qlora", parallel=None, quant="nf4"))]
        elif req.mode == "inference" and not req.quant_given and WEIGHT_FORMATS[req.quant].bits >= 16:
            ways = [(quant, replace(req, quant=quant)) for quant in LIGHTER_FORMATS]
        found: list[tuple[LighterWay, Option]] = []
        for way, lighter in ways:
            best = self.cheapest(replace(lighter, gpu=None, gpu_count=1), limit=1)
            if not best or best[0].hourly_price is None:
                continue
            if heavy is None or heavy.hourly_price is None or best[0].hourly_price < heavy.hourly_price:
                found.append((way, best[0]))
        return found

    # ---- what would make it fit ----
    def suggestions(self, req: FitRequest, gpu: GPUSpec, result: FitResult) -> list[Suggestion]:
        """Changes that make the request fit on the named GPU: a smaller weight format, a shorter context,
        a smaller KV dtype, more cards of the same type, or (GGUF) layers left in CPU memory."""
        model = req.model
        found: list[Suggestion] = []
        if model.kind != "llm" or req.mode != "inference":
            if model.kind == "diffusion" and not result.fits:
                # FLUX in BF16 on a 24 GB card: its weights in FP8 or NF4, as diffusers and ComfyUI load them
                usable, bits = self.usable(req, gpu), WEIGHT_FORMATS[req.quant].bits
                for quant in DIFFUSION_SMALLER:
                    if WEIGHT_FORMATS[quant].bits < bits:
                        total = self.breakdown(replace(req, quant=quant), gpu, req.gpu_count).total
                        if total <= usable:
                            found.append(Suggestion("quant", quant, True, total / GIB))
                            break
            if result.min_gpus and result.min_gpus != req.gpu_count:
                found.append(Suggestion("gpus", result.min_gpus, True, self._per_gpu(req, gpu, result.min_gpus)))
            if model.kind == "llm":
                found += self.training_alternatives(req, gpu)
            return found
        usable, count = self.usable(req, gpu), req.gpu_count
        current_bits = WEIGHT_FORMATS[req.quant].bits
        smaller = [q for q in QUANT_LADDER if WEIGHT_FORMATS[q].bits < current_bits]
        last: Suggestion | None = None
        for quant in smaller:
            total = self.breakdown(replace(req, quant=quant), gpu, count).total
            last = Suggestion("quant", quant, total <= usable, total / GIB)
            if last.fits:
                break
        if last is not None:
            found.append(last)
        if result.max_context and result.max_context < req.effective_context:
            total = self.breakdown(req, gpu, count, context=result.max_context).total
            found.append(Suggestion("context", result.max_context, True, total / GIB))
        if KV_DTYPES[req.kv_dtype].bytes_per_value > KV_DTYPES["fp8"].bytes_per_value:
            for kv in KV_LADDER:
                total = self.breakdown(replace(req, kv_dtype=kv), gpu, count).total
                if total <= usable:
                    found.append(Suggestion("kv_dtype", kv, True, total / GIB))
                    break
        if result.min_gpus and result.min_gpus > count:
            found.append(Suggestion("gpus", result.min_gpus, True, self._per_gpu(req, gpu, result.min_gpus)))
        offload = self.offload(req, gpu)
        if offload is not None:
            found.append(offload)
        return found

    def training_alternatives(self, req: FitRequest, gpu: GPUSpec) -> list[Suggestion]:
        """Lighter ways to train on ``gpu`` when this one does not fit: DDP keeps the whole model, its
        gradients and optimizer state on every GPU, so sharding them (FSDP / ZeRO-3) needs fewer bytes per GPU,
        and training adapters on a frozen base (LoRA; QLoRA on a 4-bit base) far fewer. Each with the fewest
        GPUs it fits on; a way that fits on none is left out."""
        found: list[Suggestion] = []
        if req.mode == "train" and req.effective_parallel == "ddp":
            sharded = replace(req, parallel="fsdp")
            count = self.min_gpus(sharded, gpu)
            if count:
                found.append(Suggestion("fsdp", count, True, self._per_gpu(sharded, gpu, count)))
        lighter: tuple[Literal["lora", "qlora"], ...] = ("lora", "qlora") if req.mode == "train" \
            else ("qlora",) if req.mode == "lora" else ()
        for mode in lighter:
            adapters = replace(req, mode=mode, parallel=None, quant="nf4" if mode == "qlora" else req.quant)
            count = self.min_gpus(adapters, gpu)
            if count is None:  # one copy per GPU does not fit: shard the frozen base too
                adapters = replace(adapters, parallel="fsdp")
                count = self.min_gpus(adapters, gpu)
            if count:
                found.append(Suggestion(mode, count, True, self._per_gpu(adapters, gpu, count)))
        return found

    def _per_gpu(self, req: FitRequest, gpu: GPUSpec, count: int) -> float:
        return self.breakdown(replace(req, gpu_count=count), gpu, count).total / GIB

    def offload(self, req: FitRequest, gpu: GPUSpec) -> Suggestion | None:
        """llama.cpp's -ngl: how many transformer layers of a GGUF file fit on the GPUs, the rest staying
        in CPU memory (slower, but it runs). The current format when it is a GGUF type, else Q4_K_M."""
        model = req.model
        if model.kind != "llm" or not model.layers:
            return None
        quant = req.quant if WEIGHT_FORMATS[req.quant].kind in ("gguf_mix", "gguf_block") else "q4_k_m"
        count = req.gpu_count
        full = self.breakdown(replace(req, quant=quant), gpu, count)
        # per-GPU bytes of one layer (weights + its cache); what is not per layer stays on the GPU
        per_layer = (full.weights + full.kv_cache) / model.layers
        fixed = full.total - full.weights - full.kv_cache
        budget = self.usable(req, gpu) - fixed
        layers = max(0, min(model.layers, int(budget // per_layer))) if per_layer > 0 else model.layers
        on_gpu = fixed + layers * per_layer
        if layers >= model.layers:
            return None  # the whole model fits in this format: the quant suggestion says so
        return Suggestion("offload", layers, layers > 0, on_gpu / GIB, layers=model.layers, quant=quant)

    def _weights_total(self, req: FitRequest) -> float:
        model = req.model
        if model.kind == "diffusion":
            return diffusion_weight_bytes(model, WEIGHT_FORMATS[req.quant])
        if model.kind == "asr":
            return model.params * WEIGHT_FORMATS[req.quant].bits / 8
        if req.mode == "qlora":
            return weight_bytes(model, WEIGHT_FORMATS["nf4"])
        if req.mode == "train":
            return model.params * 2.0
        return weight_bytes(model, WEIGHT_FORMATS[req.quant])

    def _notes(self, req: FitRequest, result: FitResult) -> list[Phrase]:
        model, notes = req.model, []
        parallel = req.effective_parallel
        if req.training_asked:  # first: the figures below are for generating, not for the training asked
            notes.append(Phrase.of("fit_note_training_llm_only", model=model.name))
        if model.estimated:
            notes.append(Phrase.of("fit_note_estimated"))
        if model.kind == "llm" and model.is_mla:
            notes.append(Phrase.of("fit_note_mla", kv_lora_rank=model.kv_lora_rank, rope_dim=model.rope_dim))
        elif model.kind == "llm" and model.kv_heads < model.heads:
            notes.append(Phrase.of("fit_note_gqa", kv_heads=model.kv_heads, heads=model.heads))
        if model.sliding_window and model.sliding_layers and model.kind == "llm":
            notes.append(Phrase.of("fit_note_sliding", sliding_layers=model.sliding_layers, layers=model.layers,
                                   window=model.sliding_window))
        if model.experts and req.mode == "inference":
            notes.append(Phrase.of("fit_note_moe", experts=model.experts, active=model.experts_active))
        if req.mode != "inference" and parallel == "ddp" and req.gpu_count > 1:
            notes.append(Phrase.of("fit_note_ddp"))
        if req.context is not None and req.context > model.max_context and model.kind == "llm":
            notes.append(Phrase.of("fit_note_context_over", context=f"{req.context:,}",
                                   max_context=f"{model.max_context:,}"))
        if model.kind == "diffusion" and not req.vae_tiling:
            notes.append(Phrase.of("fit_note_vae_tiling"))
        if not result.gpu_was_given:
            notes.append(Phrase.of("fit_note_no_gpu" if result.cheapest else "fit_note_no_gpu_none_fits",
                                   gpu=result.gpu.name, max_gpus=MAX_GPUS))
        elif not result.rentable:
            if result.cheapest:
                notes.append(Phrase.of("fit_note_not_rented", gpu=result.gpu.name))
            else:
                notes.append(Phrase.of("fit_note_not_rented_none_fits", gpu=result.gpu.name))
        if (model.kind == "llm" and parallel == "tp" and req.gpu_count > 1
                and not tp_divides(model, req.gpu_count)):
            sizes = nearest_tp_sizes(model, req.gpu_count)
            notes.append(Phrase.of("fit_note_tp_heads", count=req.gpu_count, heads=model.heads,
                                   kv_heads=model.kv_heads, sizes=", ".join(map(str, sizes)) or "1"))
        if result.gpu.devices_per_card > 1:
            notes.append(Phrase.of("fit_note_multi_device", gpu=result.gpu.name,
                                   devices=result.gpu.devices_per_card,
                                   memory=f"{result.gpu.memory_gb / result.gpu.devices_per_card:g}"))
        if req.quant == "bf16" and model.kind == "llm" and not result.gpu.supports_bf16:
            notes.append(Phrase.of("fit_note_no_bf16", gpu=result.gpu.name))
        if result.min_gpus is None and result.gpu_was_given:
            notes.append(Phrase.of("fit_note_never_fits", max_gpus=MAX_GPUS, gpu=result.gpu.name))
        if req.quant == "fp8" and model.kind == "llm" and result.gpu.fp8_tflops is None:
            notes.append(Phrase.of("fit_note_no_fp8", gpu=result.gpu.name))
        return notes
