"""The models added for 2025: weights within ±3% of each published checkpoint, architectures that
reproduce the published parameter counts, released precision as the default, and a config.json source."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu.fit.engine import weight_bytes
from gpu.fit.models import ModelCatalog, load_model_catalog
from gpu.fit.quant import WEIGHT_FORMATS
from tests.conftest import DATA_DIR, fit_service

GB, GIB = 1e9, 2**30

# Published checkpoint sizes, in the released precision. gpt-oss: the model card gives the checkpoint size
# itself (OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", table 1: 60.8 GiB and 12.8 GiB, MXFP4 experts).
# The others: the parameter count the Hugging Face model page (or the vendor's card) publishes x the bytes
# of the released dtype (BF16 2, FP8 1); multimodal checkpoints include their vision tower.
#   model id                     quant    size   unit  source
REFERENCE_CHECKPOINTS: list[tuple[str, str, float, float, str]] = [
    ("gpt-oss-20b", "mxfp4", 12.8, GIB, "gpt-oss model card table 1"),
    ("gpt-oss-120b", "mxfp4", 60.8, GIB, "gpt-oss model card table 1"),
    ("llama-4-scout", "bf16", 218.0, GB, "meta-llama/Llama-4-Scout-17B-16E-Instruct: 109B params, BF16"),
    ("llama-4-maverick", "bf16", 800.0, GB, "Llama 4 model card: Maverick 400B total params, BF16"),
    ("llama-3.3-70b", "bf16", 141.0, GB, "meta-llama/Llama-3.3-70B-Instruct: 70.6B params, BF16"),
    ("gemma-3-1b", "bf16", 2.0, GB, "google/gemma-3-1b-it: 1B params, BF16"),
    ("gemma-3-4b", "bf16", 8.6, GB, "google/gemma-3-4b-it: 4.3B params, BF16"),
    ("gemma-3-12b", "bf16", 24.4, GB, "google/gemma-3-12b-it: 12.2B params, BF16"),
    ("gemma-3-27b", "bf16", 54.8, GB, "google/gemma-3-27b-it: 27.4B params, BF16"),
    ("qwen3-coder-30b-a3b", "bf16", 61.0, GB, "Qwen/Qwen3-Coder-30B-A3B-Instruct: 30.5B params, BF16"),
    ("qwen3-coder-480b-a35b", "bf16", 960.0, GB, "Qwen/Qwen3-Coder-480B-A35B-Instruct: 480B params, BF16"),
    ("qwen2.5-vl-7b", "bf16", 16.6, GB, "Qwen/Qwen2.5-VL-7B-Instruct: 8.29B params, BF16"),
    ("qwen2.5-vl-72b", "bf16", 146.8, GB, "Qwen/Qwen2.5-VL-72B-Instruct: 73.4B params, BF16"),
    ("deepseek-r1-distill-qwen-1.5b", "bf16", 3.55, GB, "DeepSeek-R1-Distill-Qwen-1.5B: 1.78B params, BF16"),
    ("deepseek-r1-distill-qwen-7b", "bf16", 15.2, GB, "DeepSeek-R1-Distill-Qwen-7B: 7.62B params, BF16"),
    ("deepseek-r1-distill-qwen-14b", "bf16", 29.5, GB, "DeepSeek-R1-Distill-Qwen-14B: 14.8B params, BF16"),
    ("deepseek-r1-distill-qwen-32b", "bf16", 65.5, GB, "DeepSeek-R1-Distill-Qwen-32B: 32.8B params, BF16"),
    ("deepseek-r1-distill-llama-8b", "bf16", 16.1, GB, "DeepSeek-R1-Distill-Llama-8B: 8.03B params, BF16"),
    ("deepseek-r1-distill-llama-70b", "bf16", 141.0, GB, "DeepSeek-R1-Distill-Llama-70B: 70.6B params, BF16"),
    ("mistral-small-3.1-24b", "bf16", 48.0, GB, "Mistral-Small-3.1-24B-Instruct-2503: 24.0B params, BF16"),
    ("phi-4", "bf16", 29.3, GB, "microsoft/phi-4: 14.7B params, BF16"),
    ("kimi-k2", "fp8", 1030.0, GB, "moonshotai/Kimi-K2-Instruct: 1.03T params, FP8 block weights"),
    ("glm-4.5", "bf16", 716.0, GB, "zai-org/GLM-4.5: 358B params (incl. the MTP layer), BF16"),
    ("glm-4.5-air", "bf16", 221.0, GB, "zai-org/GLM-4.5-Air: 110B params (incl. the MTP layer), BF16"),
]
# Text-only checkpoints: the architecture alone (no `params` given) must reproduce the published count.
TEXT_ONLY = ["gpt-oss-20b", "gpt-oss-120b", "llama-3.3-70b", "gemma-3-1b", "qwen3-coder-30b-a3b",
             "qwen3-coder-480b-a35b", "deepseek-r1-distill-qwen-1.5b", "deepseek-r1-distill-qwen-7b",
             "deepseek-r1-distill-qwen-14b", "deepseek-r1-distill-qwen-32b", "deepseek-r1-distill-llama-8b",
             "deepseek-r1-distill-llama-70b", "phi-4", "kimi-k2", "glm-4.5", "llama-4-maverick"]


@pytest.fixture(scope="module")
def models() -> ModelCatalog:
    return load_model_catalog(DATA_DIR)


@pytest.mark.parametrize(("model_id", "quant", "size", "unit", "source"), REFERENCE_CHECKPOINTS,
                         ids=[row[0] for row in REFERENCE_CHECKPOINTS])
def test_weights_match_published_checkpoint(models: ModelCatalog, model_id: str, quant: str, size: float,
                                            unit: float, source: str) -> None:
    model = models.get(model_id)
    computed = weight_bytes(model, WEIGHT_FORMATS[quant])
    assert computed == pytest.approx(size * unit, rel=0.03), source


@pytest.mark.parametrize("model_id", TEXT_ONLY)
def test_architecture_reproduces_published_params(models: ModelCatalog, model_id: str) -> None:
    model = models.get(model_id)
    from_architecture = replace(model, params_total=None).params
    assert from_architecture == pytest.approx(model.params, rel=0.03)


def test_every_new_model_cites_its_config(models: ModelCatalog) -> None:
    cited = {m.id for m in models.all() if m.config_url}
    assert {row[0] for row in REFERENCE_CHECKPOINTS} <= cited
    for model in models.all():
        if model.config_url:
            assert model.config_url.startswith("https://huggingface.co/") and model.config_url.endswith(
                "config.json"), model.id


def test_released_precision_is_the_default() -> None:
    service = fit_service()
    assert service.fit("gpt-oss-120b on h100").request.quant == "mxfp4"
    assert service.fit("gpt-oss-20b 4090").fits  # the 16 GB-class model of its card
    assert service.fit("kimi k2 8xh200").request.quant == "fp8"
    assert service.fit("gemma 3 27b h100").request.quant == "bf16"
    assert service.fit("gpt-oss-120b bf16 on h100").request.quant == "bf16"  # asked for, honoured


def test_new_model_names_resolve() -> None:
    service = fit_service()
    for text, model_id in (("gpt-oss-120b on h100", "gpt-oss-120b"), ("llama 4 scout h100", "llama-4-scout"),
                           ("llama-3.3-70b h100", "llama-3.3-70b"), ("gemma-3-12b-it l4", "gemma-3-12b"),
                           ("qwen3-coder-480b 8xh200", "qwen3-coder-480b-a35b"),
                           ("qwen2.5-vl-7b 4090", "qwen2.5-vl-7b"), ("mistral small 3.2 4090", "mistral-small-3.1-24b"),
                           ("phi-4 4090", "phi-4"), ("glm-4.5-air h200", "glm-4.5-air"),
                           ("deepseek-r1-distill-qwen-32b 2x4090", "deepseek-r1-distill-qwen-32b")):
        assert service.fit(text).request.model.id == model_id, text


def test_bench_reference_table_is_this_one() -> None:
    from anchorgpu.bench.fit import REFERENCE_CHECKPOINTS as BENCH

    assert [row[:4] for row in BENCH] == [row[:4] for row in REFERENCE_CHECKPOINTS]
