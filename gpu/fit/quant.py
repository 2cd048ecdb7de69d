"""Weight formats and KV-cache dtypes with their real storage cost.

GGUF k-quant mixes use the effective bits per weight llama.cpp measures on Llama-3.1-8B
(`tools/quantize/README.md`); they already include the tensors the mix keeps wider. Legacy block
types use their exact block size (`ggml-common.h`: Q4_0 = 18 B / 32 weights) and llama.cpp's rule of
storing the output matrix as Q6_K. GPTQ/AWQ store int4 linear weights plus one fp16 scale and a packed
4-bit zero per group of 128 (4 + 16/128 + 4/128 bits), while embeddings and the LM head stay 16-bit.
bitsandbytes NF4 with double quantization: 4 bits + 8-bit absmax per 64 + fp32 per 256 absmax
(QLoRA paper: 0.127 bits/param of constants); without double quantization one fp32 absmax per 64 weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

QuantKind = Literal["float", "gguf_mix", "gguf_block", "linear_only", "experts_only"]
Q6_K_BPW = 6.5625  # 210 B per 256 weights


@dataclass(frozen=True)
class WeightFormat:
    name: str
    bits: float  # bits per weight of the bulk (quantized) tensors
    kind: QuantKind
    label: str


def _f(name: str, bits: float, kind: QuantKind, label: str) -> WeightFormat:
    return WeightFormat(name, bits, kind, label)


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.name: f
    for f in (
        _f("fp32", 32.0, "float", "FP32"),
        _f("bf16", 16.0, "float", "BF16"),
        _f("fp16", 16.0, "float", "FP16"),
        # FP8/INT8 checkpoints (llm-compressor, vLLM) quantize the blocks' linear layers; embeddings and
        # the LM head stay 16-bit.
        _f("fp8", 8.0, "linear_only", "FP8 (E4M3)"),
        _f("int8", 8.0, "linear_only", "INT8 (per-channel)"),
        # llama.cpp quantize README, Llama-3.1-8B effective bpw (whole file / params): Q2_K, Q4_K_M,
        # Q5_K_M, Q6_K, Q8_0 are quoted in /work/shared/reference/vram-figures.md; the _S/_L/Q3 mixes are
        # the same table's values as remembered (approximate to ~0.05 bpw).
        _f("q2_k", 3.1593, "gguf_mix", "GGUF Q2_K"),
        _f("q3_k_s", 3.4597, "gguf_mix", "GGUF Q3_K_S"),
        _f("q3_k_m", 3.74, "gguf_mix", "GGUF Q3_K_M"),
        _f("q3_k_l", 4.03, "gguf_mix", "GGUF Q3_K_L"),
        _f("q4_k_s", 4.6672, "gguf_mix", "GGUF Q4_K_S"),
        _f("q4_k_m", 4.8944, "gguf_mix", "GGUF Q4_K_M"),
        _f("q5_k_s", 5.5704, "gguf_mix", "GGUF Q5_K_S"),
        _f("q5_k_m", 5.7036, "gguf_mix", "GGUF Q5_K_M"),
        _f("q6_k", 6.5633, "gguf_mix", "GGUF Q6_K"),
        _f("q8_0", 8.5008, "gguf_mix", "GGUF Q8_0"),
        # ggml-common.h block sizes: bytes per 32-weight block * 8 / 32.
        _f("q4_0", 4.5, "gguf_block", "GGUF Q4_0"),
        _f("q4_1", 5.0, "gguf_block", "GGUF Q4_1"),
        _f("q5_0", 5.5, "gguf_block", "GGUF Q5_0"),
        _f("q5_1", 6.0, "gguf_block", "GGUF Q5_1"),
        _f("iq4_xs", 4.25, "gguf_block", "GGUF IQ4_XS"),
        _f("iq4_nl", 4.5, "gguf_block", "GGUF IQ4_NL"),
        _f("iq3_xxs", 3.0625, "gguf_block", "GGUF IQ3_XXS"),
        _f("iq2_xxs", 2.0625, "gguf_block", "GGUF IQ2_XXS"),
        _f("iq1_s", 1.5625, "gguf_block", "GGUF IQ1_S"),
        _f("f16", 16.0, "float", "GGUF F16"),
        # int4 with group-128 fp16 scale + packed 4-bit zero point.
        _f("gptq", 4.0 + 16 / 128 + 4 / 128, "linear_only", "GPTQ int4 g128"),
        _f("awq", 4.0 + 16 / 128 + 4 / 128, "linear_only", "AWQ int4 g128"),
        _f("gptq8", 8.0 + 16 / 128 + 8 / 128, "linear_only", "GPTQ int8 g128"),
        # bitsandbytes: NF4 + double quant (QLoRA paper), LLM.int8().
        _f("nf4", 4.0 + 0.127, "linear_only", "NF4 + double quant (bitsandbytes)"),
        _f("nf4_nodq", 4.0 + 32 / 64, "linear_only", "NF4 (bitsandbytes, fp32 absmax per 64)"),
        _f("int8_bnb", 8.0 + 32 / 4096, "linear_only", "LLM.int8 (bitsandbytes)"),
        # OCP MXFP4 as gpt-oss ships it: the MoE experts' weights in 4-bit E2M1 blocks of 32 with one
        # shared 8-bit (E8M0) scale = 4.25 bits; attention, router, embeddings and the head stay BF16.
        # On a dense model it quantizes the blocks' linear layers the same way.
        _f("mxfp4", 4.0 + 8 / 32, "experts_only", "MXFP4 (4.25 bits; BF16 outside the experts)"),
    )
}

QUANT_ALIASES: dict[str, str] = {
    "float32": "fp32", "f32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
    "fp8_e4m3": "fp8", "e4m3": "fp8", "w8a8": "fp8", "q8": "q8_0", "q4": "q4_k_m", "q4km": "q4_k_m",
    "q4_k": "q4_k_m", "q5": "q5_k_m", "q5_k": "q5_k_m", "q3_k": "q3_k_m", "q6": "q6_k", "q2": "q2_k",
    "int4": "awq", "4bit": "nf4", "4-bit": "nf4", "bnb4": "nf4", "bnb-4bit": "nf4", "8bit": "int8_bnb",
    "mx_fp4": "mxfp4", "mxfp4_moe": "mxfp4", "fp4": "mxfp4",
    "gptq-int4": "gptq", "gptq_int4": "gptq", "awq-int4": "awq", "gptq-int8": "gptq8", "gptq_int8": "gptq8",
}


@dataclass(frozen=True)
class KVDtype:
    name: str
    bytes_per_value: float


# q8_0 / q4_0 caches use the same 32-value blocks as the weights (34 B and 18 B per block).
KV_DTYPES: dict[str, KVDtype] = {
    d.name: d
    for d in (
        KVDtype("f32", 4.0),
        KVDtype("f16", 2.0),
        KVDtype("bf16", 2.0),
        KVDtype("fp8", 1.0),
        KVDtype("q8_0", 34 / 32),
        KVDtype("q4_0", 18 / 32),
    )
}
KV_ALIASES = {"fp16": "f16", "float16": "f16", "bfloat16": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
              "int8": "q8_0", "q8": "q8_0", "q4": "q4_0", "fp32": "f32"}


def normalize_quant(text: str) -> str | None:
    key = text.strip().lower().replace("-", "_")
    key = QUANT_ALIASES.get(key, QUANT_ALIASES.get(text.strip().lower(), key))
    return key if key in WEIGHT_FORMATS else None


def normalize_kv(text: str) -> str | None:
    key = text.strip().lower().replace("-", "_")
    key = KV_ALIASES.get(key, key)
    return key if key in KV_DTYPES else None
