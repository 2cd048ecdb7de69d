"""Model architectures: the shipped catalog (`data/models.yaml`), plus models described on the fly by a
parameter count ("13b"), a Hugging Face `config.json`, or a GGUF header (metadata only)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpu.catalog import UnknownNameError, normalize_name, suggest
from infra.i18n import Phrase
from infra.yamlfile import Text, load

ModelKind = Literal["llm", "diffusion", "asr"]
MAX_CONFIG_BYTES = 1_000_000  # a config.json is a few KB; anything larger is not one
MAX_GGUF_HEADER_BYTES = 64 * 2**20  # metadata (incl. the tokenizer) of real GGUF files fits in this
MAX_DIMENSION = 10**9  # any single size in a config (layers, vocab, experts…); bounds float products
MAX_PARAMS = 10**15


class ModelInputError(ValueError):
    """A model description that cannot be used: a catalog phrase saying why (rendered by the fronts)."""

    def __init__(self, message_key: str, /, **params: Any) -> None:
        self.phrase = Phrase(message_key, params)
        super().__init__(self.phrase.render("en"))


@dataclass(frozen=True)
class ModelSpec:
    id: str
    name: str
    kind: ModelKind = "llm"
    family: str = ""
    params_total: int | None = None
    active_params: int | None = None
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    vocab: int = 0
    ffn: int = 0
    tied: bool = False
    experts: int = 0
    experts_active: int = 0
    shared_experts: int = 0
    moe_ffn: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    rope_dim: int = 0
    sliding_window: int = 0
    sliding_layers: int = 0
    max_context: int = 131072
    aliases: tuple[str, ...] = ()
    components: tuple[tuple[str, int], ...] = ()
    resolution: int = 1024
    encoder_layers: int = 0
    audio_ctx: int = 1500
    text_ctx: int = 448
    estimated: bool = False  # architecture guessed from a parameter count
    source: str = "catalog"
    native_quant: str | None = None  # e.g. the GGUF file's own type
    gguf_bits: float | None = None  # measured bits/weight of an uploaded GGUF file
    config_url: str = ""  # the config.json the architecture was copied from

    # ---- parameter accounting ----
    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden

    @property
    def head_params(self) -> int:
        """The LM head when it is a separate matrix (untied)."""
        return 0 if self.tied else self.vocab * self.hidden

    def _attention_params(self) -> int:
        if self.kv_lora_rank:
            # MLA (DeepSeek-V3): q low-rank 1536, kv down to kv_lora+rope, up to heads x (128 nope + 128 v).
            q = self.hidden * 1536 + 1536 * self.heads * (128 + self.rope_dim)
            kv = self.hidden * (self.kv_lora_rank + self.rope_dim) + self.kv_lora_rank * self.heads * 256
            return q + kv + self.heads * 128 * self.hidden
        q_width = self.heads * self.head_dim
        return self.hidden * q_width * 2 + 2 * self.hidden * self.kv_heads * self.head_dim

    def _mlp_params(self, moe_layer: bool) -> int:
        if not moe_layer:
            return 3 * self.hidden * self.ffn
        experts = (self.experts + self.shared_experts) * 3 * self.hidden * self.moe_ffn
        return experts + self.hidden * self.experts

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def params(self) -> int:
        if self.params_total:
            return self.params_total
        if self.kind == "diffusion":
            return sum(count for _, count in self.components)
        per_layer_dense = self._attention_params() + self._mlp_params(False) + 2 * self.hidden
        per_layer_moe = self._attention_params() + self._mlp_params(True) + 2 * self.hidden
        dense = self.layers - self.moe_layers
        return (dense * per_layer_dense + self.moe_layers * per_layer_moe
                + self.embedding_params + self.head_params + self.hidden)

    @property
    def routed_expert_params(self) -> int:
        """Weights of the routed experts (what MXFP4 checkpoints quantize); 0 for a dense model."""
        return self.experts * 3 * self.hidden * self.moe_ffn * self.moe_layers

    @property
    def params_active(self) -> int:
        if self.active_params:
            return self.active_params
        if not self.experts:
            return self.params
        inactive = (self.experts - self.experts_active) * 3 * self.hidden * self.moe_ffn * self.moe_layers
        return max(self.params - inactive, 1)

    @property
    def linear_params(self) -> int:
        """Parameters inside the transformer blocks' matmuls (what GPTQ/AWQ/NF4 quantize)."""
        return max(self.params - self.embedding_params - self.head_params, 0)

    # ---- attention / cache layout ----
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    def kv_values_per_token_layer(self) -> int:
        """Cached values per token per layer: K and V for each KV head, or the MLA latent + rope key."""
        if self.is_mla:
            return self.kv_lora_rank + self.rope_dim
        return 2 * self.kv_heads * self.head_dim

    def label(self) -> str:
        return self.name


# ---------------------------------------------------------------- catalog


class _ModelRow(BaseModel):
    """One model of ``models.yaml``: the fields of :class:`ModelSpec` (``params`` is ``params_total``);
    a field left out takes the ModelSpec default, ``name`` the id."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[Text, Field(min_length=1)]
    name: Text | None = None
    kind: ModelKind = "llm"
    family: Text = ""
    params: int | None = None
    params_total: int | None = None
    active_params: int | None = None
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    vocab: int = 0
    ffn: int = 0
    tied: bool = False
    experts: int = 0
    experts_active: int = 0
    shared_experts: int = 0
    moe_ffn: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    rope_dim: int = 0
    sliding_window: int = 0
    sliding_layers: int = 0
    max_context: int = 131072
    aliases: list[Text] = []
    components: dict[Text, int] = {}
    resolution: int = 1024
    encoder_layers: int = 0
    audio_ctx: int = 1500
    text_ctx: int = 448
    estimated: bool = False
    source: Text = "catalog"
    native_quant: Text | None = None
    gguf_bits: float | None = None
    config_url: Text = ""

    def spec(self) -> ModelSpec:
        data: dict[str, Any] = self.model_dump(exclude_unset=True)
        if "params" in data:
            data["params_total"] = data.pop("params")
        if "aliases" in data:
            data["aliases"] = tuple(data["aliases"])
        if "components" in data:
            data["components"] = tuple(data["components"].items())
        if data.get("name") is None:
            data["name"] = self.id
        return ModelSpec(**data)


class _ModelFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[_ModelRow]


class ModelCatalogError(ValueError):
    """``models.yaml`` is invalid; the message names the file, the line and the field."""


class ModelCatalog:
    def __init__(self, specs: list[ModelSpec]) -> None:
        self._by_id = {spec.id: spec for spec in specs}
        self._index: dict[str, str] = {}
        for spec in specs:
            for spelling in (spec.id, spec.name, *spec.aliases):
                self._index.setdefault(normalize_name(spelling), spec.id)

    def all(self) -> list[ModelSpec]:
        return list(self._by_id.values())

    def get(self, model_id: str) -> ModelSpec:
        return self._by_id[model_id]

    def find(self, text: str) -> ModelSpec | None:
        model_id = self._index.get(normalize_name(text))
        return self._by_id[model_id] if model_id else None

    def resolve(self, text: str) -> ModelSpec:
        spec = self.find(text)
        if spec is None:
            raise UnknownNameError(text.strip(), self.suggestions(text), kind="model")
        return spec

    def suggestions(self, text: str, limit: int = 3) -> list[str]:
        return suggest(text, self._index, limit=limit, cutoff=60.0)

    def spellings(self) -> dict[str, str]:
        """Normalised spelling → model id (the fit parser's "did you mean" for a misspelt model)."""
        return dict(self._index)


def read_model_catalog(path: Path) -> ModelCatalog:
    """Parse ``models.yaml``; the one reader is :class:`gpu.data.GpuData`."""
    rows = load(_ModelFile, path, ModelCatalogError).models
    return ModelCatalog([row.spec() for row in rows])


def load_model_catalog(data_dir: Path) -> ModelCatalog:
    """The catalog from ``data_dir/models.yaml`` (tools and tests; the app reads it through GpuData)."""
    return read_model_catalog(data_dir / "models.yaml")


# ---------------------------------------------------------------- models from a size


PARAM_COUNT = re.compile(r"^(\d+(?:[.,]\d+)?)\s*([bmt])$", re.IGNORECASE)


def parse_param_count(text: str) -> int | None:
    match = PARAM_COUNT.match(text.strip())
    if not match:
        return None
    value = float(match.group(1).replace(",", "."))
    scale = {"m": 1e6, "b": 1e9, "t": 1e12}[match.group(2).lower()]
    return int(value * scale)


# Llama-family shapes by size; a parameter count picks the nearest and scales layers to match. Above 150B the
# shape is Llama 3.1 405B's (hidden 16384, 128 heads, ffn 53248): 70B's would give a 405B model 471 layers and
# over three times its KV cache.
_SHAPES = ((1.5e9, 2048, 16, 8192, 64), (4e9, 3072, 24, 8192, 128), (10e9, 4096, 32, 14336, 128),
           (20e9, 5120, 40, 13824, 128), (45e9, 6656, 52, 17920, 128), (150e9, 8192, 64, 28672, 128),
           (1e20, 16384, 128, 53248, 128))


def model_from_param_count(params: int) -> ModelSpec:
    if not 1e7 <= params <= 5e12:
        raise ModelInputError("fit_err_params_range", params=f"{params:,}")
    _, hidden, heads, ffn, head_dim = next(shape for shape in _SHAPES if params <= shape[0])
    vocab = 128256 if params >= 2e9 else 32000
    per_layer = 2 * hidden * hidden + 2 * hidden * 8 * head_dim + 3 * hidden * ffn
    layers = max(2, round((params - 2 * vocab * hidden) / per_layer))
    label = f"{params / 1e9:.3g}B" if params >= 1e9 else f"{params / 1e6:.3g}M"
    return ModelSpec(
        id=f"custom-{label.lower()}", name=f"{label}-parameter model (Llama-like architecture assumed)",
        params_total=params, layers=layers, hidden=hidden, heads=heads, kv_heads=8, head_dim=hidden // heads,
        vocab=vocab, ffn=ffn, estimated=True, source="parameter count",
    )


# ---------------------------------------------------------------- models from config.json


def model_from_hf_config(raw: bytes | str | dict[str, Any], name: str = "config.json") -> ModelSpec:
    """A transformer LLM from a Hugging Face config.json (text_config for multimodal wrappers)."""
    if isinstance(raw, dict):
        config: Any = raw
    else:
        if len(raw) > MAX_CONFIG_BYTES:
            raise ModelInputError("fit_err_config_too_big", name=name, size=f"{len(raw):,}")
        try:
            config = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # nesting bombs too
            raise ModelInputError("fit_err_config_json", name=name, detail=str(exc)) from None
    if not isinstance(config, dict):
        raise ModelInputError("fit_err_config_object", name=name)
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}

    def num(*keys: str, default: int | None = None) -> int:
        for key in keys:
            value = config.get(key)
            if isinstance(value, bool):
                continue
            # json.loads accepts Infinity and NaN: int() of those raises, so only finite numbers count
            if isinstance(value, int | float) and value >= 0 and math.isfinite(value):
                if value > MAX_DIMENSION:  # later products would overflow floats; no real model is near this
                    raise ModelInputError("fit_err_config_implausible", name=name, key=key, value=f"{value:.3g}")
                return int(value)
        if default is None:
            raise ModelInputError("fit_err_config_lacks", name=name, key=keys[0])
        return default

    hidden = num("hidden_size", "n_embd", "d_model")
    layers = num("num_hidden_layers", "n_layer", "num_layers")
    heads = num("num_attention_heads", "n_head")
    if not (hidden and layers and heads) or hidden > 1_000_000 or layers > 10_000 or heads > 10_000:
        raise ModelInputError("fit_err_config_sizes", name=name, hidden=hidden, layers=layers, heads=heads)
    kv_heads = num("num_key_value_heads", "n_head_kv", default=heads) or heads
    head_dim = num("head_dim", default=hidden // heads) or hidden // heads
    experts = num("num_local_experts", "n_routed_experts", "num_experts", default=0)
    window = num("sliding_window", default=0) if config.get("use_sliding_window", True) else 0
    layer_types = config.get("layer_types")
    if isinstance(layer_types, list):
        sliding_layers = sum(1 for kind in layer_types if kind == "sliding_attention")
    elif window and "gemma" in str(config.get("model_type", "")):
        sliding_layers = layers // 2
    elif window:
        sliding_layers = layers  # Mistral v0.1 style: every layer windowed
    else:
        sliding_layers = 0
    model_name = str(config.get("_name_or_path") or config.get("model_type") or name)
    return ModelSpec(
        id=normalize_name(model_name)[:40] or "uploaded", name=f"{model_name} (from {name})",
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        vocab=num("vocab_size", default=32000), ffn=num("intermediate_size", "n_inner", default=4 * hidden),
        tied=bool(config.get("tie_word_embeddings", False)), experts=experts,
        experts_active=num("num_experts_per_tok", "num_experts_per_token", default=2 if experts else 0),
        shared_experts=num("n_shared_experts", default=0),
        moe_ffn=num("moe_intermediate_size", default=num("intermediate_size", default=4 * hidden)),
        dense_layers=num("first_k_dense_replace", default=0),
        kv_lora_rank=num("kv_lora_rank", default=0), rope_dim=num("qk_rope_head_dim", default=0),
        sliding_window=window if sliding_layers else 0, sliding_layers=sliding_layers,
        max_context=num("max_position_embeddings", "n_positions", default=4096) or 4096,
        source="config.json",
    )


# ---------------------------------------------------------------- models from a GGUF header


def model_from_gguf(path: Path) -> ModelSpec:
    """Architecture, parameter count and quant type from a GGUF header (no tensor data is read)."""
    from gpu.fit.gguf_header import GGUFHeaderError, read_gguf_header

    try:
        with path.open("rb") as handle:
            header = read_gguf_header(handle, MAX_GGUF_HEADER_BYTES)
    except OSError as exc:
        raise ModelInputError("fit_err_file_unreadable", name=path.name, detail=str(exc.strerror)) from None
    except GGUFHeaderError as exc:
        raise ModelInputError("fit_err_gguf_header", name=path.name, detail=str(exc)) from None
    meta = header.metadata
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        raise ModelInputError("fit_err_gguf_no_arch", name=path.name)

    def num(key: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):
            value = max(value) if value else None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return default
        if not math.isfinite(value) or value < 0:
            return default
        if value > MAX_DIMENSION:
            raise ModelInputError("fit_err_config_implausible", name=path.name, key=f"{arch}.{key}",
                                  value=f"{value:.3g}")
        return int(value)

    hidden, layers, heads = num("embedding_length"), num("block_count"), num("attention.head_count")
    if not (hidden and layers and heads) or hidden > 1_000_000 or layers > 10_000:
        raise ModelInputError("fit_err_gguf_sizes", name=path.name, arch=arch)
    params = sum(t.n_elements for t in header.tensors)
    quant_bytes = sum(t.n_bytes for t in header.tensors)
    if params > MAX_PARAMS or quant_bytes > MAX_PARAMS * 4:
        raise ModelInputError("fit_err_gguf_params", name=path.name, params=f"{params:.3g}")
    names = {t.name for t in header.tensors}
    file_type = meta.get("general.file_type")
    name = str(meta.get("general.name") or path.stem)
    window = num("attention.sliding_window")
    mla_rank = num("attention.kv_lora_rank")
    return ModelSpec(
        id=normalize_name(name)[:40] or "gguf", name=f"{name} (GGUF header)", params_total=params or None,
        layers=layers, hidden=hidden, heads=heads, kv_heads=num("attention.head_count_kv", heads) or heads,
        head_dim=num("attention.key_length", hidden // heads) or hidden // heads,
        vocab=header.array_lengths.get("tokenizer.ggml.tokens", 32000), tied="output.weight" not in names,
        ffn=num("feed_forward_length", 4 * hidden), experts=num("expert_count"),
        experts_active=num("expert_used_count"), shared_experts=num("expert_shared_count"),
        moe_ffn=num("expert_feed_forward_length"), dense_layers=num("leading_dense_block_count"),
        kv_lora_rank=mla_rank, rope_dim=num("rope.dimension_count") if mla_rank else 0,
        sliding_window=window, sliding_layers=layers // 2 if window and arch.startswith("gemma") else 0,
        max_context=num("context_length", 4096) or 4096, source="gguf",
        native_quant=_GGUF_FILE_TYPES.get(int(file_type)) if isinstance(file_type, int) else None,
        gguf_bits=quant_bytes * 8 / params if params and quant_bytes else None,
    )


# llama_ftype values (llama.h) for the quant types this engine knows.
_GGUF_FILE_TYPES = {0: "fp32", 1: "f16", 2: "q4_0", 3: "q4_1", 7: "q8_0", 8: "q5_0", 9: "q5_1", 10: "q2_k",
                    11: "q3_k_s", 12: "q3_k_m", 13: "q3_k_l", 14: "q4_k_s", 15: "q4_k_m", 16: "q5_k_s",
                    17: "q5_k_m", 18: "q6_k", 30: "iq4_xs", 32: "bf16"}

