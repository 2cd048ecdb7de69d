"""Models from a Hugging Face config.json and from a GGUF header; malformed input gives clear errors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from gpu.fit.architectures import (
    ModelInputError,
    load_model_catalog,
    model_from_gguf,
    model_from_hf_config,
    model_from_param_count,
)
from gpu.fit.engine import kv_cache_bytes
from tests.conftest import DATA_DIR, fit_service

REPO = Path(__file__).resolve().parents[2]
SMALL_GGUF = REPO / "var" / "models" / "smollm2-135m-instruct-q4_1.gguf"

# HF meta-llama/Llama-3.1-8B config.json (abridged to the fields the engine reads)
LLAMA_31_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "_name_or_path": "meta-llama/Llama-3.1-8B",
}


def test_config_json_matches_catalog() -> None:
    spec = model_from_hf_config(json.dumps(LLAMA_31_8B_CONFIG).encode())
    catalog = load_model_catalog(DATA_DIR).get("llama-3.1-8b")
    assert spec.params == pytest.approx(catalog.params, rel=0.001)
    assert kv_cache_bytes(spec, 8192, 1, "f16") == kv_cache_bytes(catalog, 8192, 1, "f16")
    result = fit_service().fit("on 4090 ctx=8k", model=spec)
    assert result.fits and result.request.model is spec


def test_config_json_variants() -> None:
    # DeepSeek-style MLA + MoE fields
    ds = model_from_hf_config({"hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
                               "num_key_value_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                               "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
                               "moe_intermediate_size": 2048, "intermediate_size": 18432,
                               "first_k_dense_replace": 3, "vocab_size": 129280})
    assert ds.is_mla and ds.kv_values_per_token_layer() == 576
    assert ds.params == pytest.approx(671e9, rel=0.03)
    # Gemma-2 style sliding window, multimodal wrapper with text_config
    gemma = model_from_hf_config({"model_type": "gemma2", "text_config": {
        "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
        "head_dim": 256, "sliding_window": 4096, "vocab_size": 256000, "intermediate_size": 14336}})
    assert gemma.sliding_layers == 21 and gemma.sliding_window == 4096


@pytest.mark.parametrize(("raw", "message"), [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"hidden_size": 4096}', "lacks"),
    (b'{"hidden_size": 0, "num_hidden_layers": 32, "num_attention_heads": 32}', "implausible"),
    (b" " * 1_000_001, "at most 1 MB"),
])
def test_bad_config_json(raw: bytes, message: str) -> None:
    with pytest.raises(ModelInputError, match=message):
        model_from_hf_config(raw)


@pytest.mark.skipif(not SMALL_GGUF.exists(), reason="the provisioned test model is missing")
def test_gguf_header_of_real_file(tmp_path: Path) -> None:
    spec = model_from_gguf(SMALL_GGUF)
    # SmolLM2-135M: 30 layers, hidden 576, 9 heads / 3 KV heads, 49,152 tokens, tied embeddings.
    assert (spec.layers, spec.hidden, spec.heads, spec.kv_heads, spec.vocab, spec.tied) == (
        30, 576, 9, 3, 49152, True)
    assert spec.params == pytest.approx(134.5e6, rel=0.01)
    assert spec.native_quant == "q4_1"
    # the file's own size is reproduced from the tensor table
    assert spec.gguf_bits is not None
    assert spec.params * spec.gguf_bits / 8 == pytest.approx(SMALL_GGUF.stat().st_size, rel=0.02)
    # only the header is needed: the first 8 MB of the file are enough
    head = tmp_path / "head.gguf"
    with SMALL_GGUF.open("rb") as src:
        head.write_bytes(src.read(8 * 2**20))
    assert model_from_gguf(head).params == spec.params


def test_bad_gguf_files(tmp_path: Path) -> None:
    cases = {
        "text.gguf": b"hello world",
        "empty.gguf": b"",
        "truncated.gguf": b"GGUF" + struct.pack("<IQQ", 3, 1, 1),
        "version.gguf": b"GGUF" + struct.pack("<IQQ", 99, 0, 0),
        "huge-count.gguf": b"GGUF" + struct.pack("<IQQ", 3, 2**40, 2**40),
        "huge-string.gguf": b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 2**50),
        "no-arch.gguf": b"GGUF" + struct.pack("<IQQ", 3, 0, 0),
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ModelInputError) as info:
            model_from_gguf(path)
        assert name in str(info.value)
    with pytest.raises(ModelInputError, match="Cannot read"):
        model_from_gguf(tmp_path / "missing.gguf")


def test_a_broken_models_file_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    from gpu.fit.architectures import ModelCatalogError

    shipped = (DATA_DIR / "models.yaml").read_text(encoding="utf-8")
    lines = shipped.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith("layers:"))
    lines[index] = lines[index].replace("layers:", "layer:", 1)
    (tmp_path / "models.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ModelCatalogError) as caught:
        load_model_catalog(tmp_path)
    prefix = f"{tmp_path / 'models.yaml'}, line {index + 1}: models["
    assert str(caught.value).startswith(prefix) and "].layer: unknown field" in str(caught.value), caught.value


@pytest.mark.parametrize(("params", "model_id"), [(8_030_261_248, "llama-3.1-8b"), (70_553_706_496, "llama-3.1-70b"),
                                                  (405_853_388_800, "llama-3.1-405b")])
def test_a_bare_parameter_count_is_estimated_with_its_llama_sizes_shape(params: int, model_id: str) -> None:
    """"a 405b": the shape of Llama 3.1 405B, not 70B's stretched to 471 layers (3.6 times the KV cache)."""
    estimated = model_from_param_count(params)
    real = fit_service().parser.models.get(model_id)
    assert abs(estimated.layers - real.layers) <= 2 and estimated.hidden == real.hidden
    assert estimated.kv_heads == real.kv_heads and estimated.head_dim == real.head_dim
