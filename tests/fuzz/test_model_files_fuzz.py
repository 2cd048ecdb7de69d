"""Fuzzing the uploaded-model readers: Hugging Face config.json and GGUF headers, malformed and oversized.

A user can upload any bytes as ``config.json`` or ``*.gguf``; the readers must answer with a
:class:`ModelInputError` (a clear message) or a model the fit engine can evaluate — never another
exception, never unbounded memory for a header that claims huge strings or arrays.
"""

from __future__ import annotations

import json
import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.views.fit import render
from gpu.fit.architectures import MAX_CONFIG_BYTES, ModelInputError, ModelSpec, model_from_gguf, model_from_hf_config
from gpu.fit.request import FitInputError
from infra.markup import HTML
from tests.conftest import fit_service
from tests.fuzz.test_parsers_fuzz import assert_telegram_html

FIT = fit_service()
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REPO = Path(__file__).resolve().parents[2]
SMALL_GGUF = REPO / "var" / "models" / "smollm2-135m-instruct-q4_1.gguf"

CONFIG_KEYS = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
               "vocab_size", "intermediate_size", "num_local_experts", "num_experts_per_tok", "sliding_window",
               "max_position_embeddings", "kv_lora_rank", "qk_rope_head_dim", "n_shared_experts",
               "moe_intermediate_size", "first_k_dense_replace", "layer_types", "text_config", "model_type",
               "_name_or_path", "tie_word_embeddings", "use_sliding_window", "n_embd", "n_layer", "n_head"]
NUMBERS = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, 2, 3, 7, 64, 4096, 10**6, 10**18]))
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=30)),
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(st.text(max_size=10), children,
                                                                                max_size=5)),
    max_leaves=20)


@st.composite
def hf_configs(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(CONFIG_KEYS), max_size=len(CONFIG_KEYS), unique=True))
    config: dict[str, Any] = {key: draw(st.one_of(NUMBERS, JSON_VALUES)) for key in keys}
    if draw(st.booleans()):  # mostly plausible so that the engine is reached
        config.update(hidden_size=draw(st.integers(1, 20000)), num_hidden_layers=draw(st.integers(1, 200)),
                      num_attention_heads=draw(st.integers(1, 256)))
    return config


def _evaluate(model: ModelSpec, caption: str) -> None:
    """What the bot does with a parsed upload: fit it (with the caption) and render the answer."""
    try:
        result = FIT.fit(caption, model=model)
    except FitInputError:
        return
    assert_telegram_html(render(result, "en", markup=HTML, currency=FIT.currency))


@FUZZ
@given(hf_configs(), st.sampled_from(["", "1x h100", "8x h100 ctx=128k", "train", "q4_k_m 2x a100"]))
@example({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 0}, "")
@example({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "head_dim": 10**18}, "")
@example({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 7, "num_key_value_heads": 10**9},
         "1x h100")
@example({"hidden_size": 1.5e308, "num_hidden_layers": 32, "num_attention_heads": 32}, "")
@example({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 10**30}, "")
@example({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_local_experts": 10**12,
          "num_experts_per_tok": 10**12}, "8x h100")
@example({"text_config": {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1},
          "layer_types": ["sliding_attention"] * 3, "sliding_window": 10**15}, "")
def test_config_json_reader(config: dict[str, Any], caption: str) -> None:
    try:
        raw = json.dumps(config).encode()
    except ValueError:  # NaN and infinities are JSON here; json.dumps writes them, so this cannot happen
        return
    try:
        model = model_from_hf_config(raw, "config.json")
    except ModelInputError as exc:
        assert str(exc)
        return
    _evaluate(model, caption)


@FUZZ
@given(st.binary(max_size=2048))
@example(b"")
@example(b"\xff\xfe{")
@example(b"[" * 100_000)
@example(b'{"a":' * 50_000)
@example(b" " * (MAX_CONFIG_BYTES + 1))
def test_config_json_reader_on_raw_bytes(raw: bytes) -> None:
    try:
        model = model_from_hf_config(raw, "config.json")
    except ModelInputError as exc:
        assert str(exc)
        return
    _evaluate(model, "")


# ---- GGUF --------------------------------------------------------------------------------------------
def _gguf_string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _gguf_string(key.encode()) + struct.pack("<I", vtype) + payload


def synthetic_gguf(arch: str = "llama", layers: int = 2, embd: int = 64, heads: int = 4) -> bytes:
    """A small, valid GGUF v3 header (metadata and tensor infos, no tensor data)."""
    kvs = [
        _kv("general.architecture", 8, _gguf_string(arch.encode())),
        _kv(f"{arch}.block_count", 4, struct.pack("<I", layers)),
        _kv(f"{arch}.embedding_length", 4, struct.pack("<I", embd)),
        _kv(f"{arch}.attention.head_count", 4, struct.pack("<I", heads)),
        _kv(f"{arch}.attention.head_count_kv", 4, struct.pack("<I", heads)),
        _kv(f"{arch}.feed_forward_length", 4, struct.pack("<I", embd * 4)),
        _kv(f"{arch}.context_length", 4, struct.pack("<I", 2048)),
        _kv("general.file_type", 4, struct.pack("<I", 2)),
        _kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + b"".join(_gguf_string(t) for t in
                                                                          (b"a", b"b", b"c"))),
    ]
    tensors = []
    for index in range(layers):
        name = f"blk.{index}.attn_q.weight".encode()
        tensors.append(_gguf_string(name) + struct.pack("<I", 2) + struct.pack("<QQ", embd, embd)
                       + struct.pack("<I", 2) + struct.pack("<Q", 0))
    return b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)


VALID_GGUF = synthetic_gguf()
HOSTILE_GGUF = [
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**63),                     # a key of 8 EB
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _gguf_string(b"k") + struct.pack("<IIQ", 9, 8, 2**40),  # 1T strings
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _gguf_string(b"k") + struct.pack("<IIQ", 9, 6, 2**60),  # huge floats
    b"GGUF" + struct.pack("<IQQ", 3, 2**62, 2**62),                                          # absurd counts
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _gguf_string(b"k") + struct.pack("<I", 99),    # unknown type
    b"GGUF" + struct.pack("<IQQ", 1, 0, 0),                                                  # old version
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + _gguf_string(b"k") + struct.pack("<IIQ", 9, 9, 10**6)
    + struct.pack("<IQ", 9, 10**6) * 50,                                                     # nested arrays
    b"GGML" + VALID_GGUF[4:],
    # float32 +inf and NaN as the block count
    VALID_GGUF.replace(_kv("llama.block_count", 4, struct.pack("<I", 2)),
                       _kv("llama.block_count", 6, struct.pack("<f", float("inf")))),
    VALID_GGUF.replace(_kv("llama.embedding_length", 4, struct.pack("<I", 64)),
                       _kv("llama.embedding_length", 6, struct.pack("<f", float("nan")))),
]


def _read_gguf(raw: bytes) -> ModelSpec | None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "upload.gguf"
        path.write_bytes(raw)
        try:
            return model_from_gguf(path)
        except ModelInputError as exc:
            assert str(exc)
            return None


def test_synthetic_gguf_is_read() -> None:
    model = _read_gguf(VALID_GGUF)
    assert model is not None and model.layers == 2 and model.hidden == 64


@pytest.mark.parametrize("raw", HOSTILE_GGUF, ids=range(len(HOSTILE_GGUF)))
def test_hostile_gguf_headers(raw: bytes) -> None:
    assert _read_gguf(raw) is None


@FUZZ
@given(st.data())
def test_mutated_gguf_headers(data: st.DataObject) -> None:
    raw = bytearray(VALID_GGUF)
    for _ in range(data.draw(st.integers(1, 8))):
        position = data.draw(st.integers(0, len(raw) - 1))
        choice = data.draw(st.sampled_from(["byte", "max", "cut", "insert"]))
        if choice == "byte":
            raw[position] = data.draw(st.integers(0, 255))
        elif choice == "max":
            raw[position:position + 8] = b"\xff" * 8
        elif choice == "cut":
            del raw[position:]
            if not raw:
                raw = bytearray(b"G")
        else:
            raw[position:position] = data.draw(st.binary(min_size=1, max_size=16))
    model = _read_gguf(bytes(raw))
    if model is not None:
        _evaluate(model, data.draw(st.sampled_from(["", "1x h100", "4x a100-80gb ctx=8k"])))


def test_real_gguf_head_truncated_anywhere() -> None:
    head = SMALL_GGUF.read_bytes()[:200_000] if SMALL_GGUF.exists() else VALID_GGUF
    for cut in (3, 4, 8, 23, 24, 100, 1000, 10_000, 100_000, len(head)):
        model = _read_gguf(head[:cut])
        assert model is None or model.layers > 0
