"""The models added for 2025: weights within ±3% of each published checkpoint, architectures that
reproduce the published parameter counts, released precision as the default, and a config.json source."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dev.bench.fit import REFERENCE_CHECKPOINTS
from gpu.fit.architectures import ModelCatalog, load_model_catalog
from gpu.fit.engine import weight_bytes
from gpu.fit.quant import WEIGHT_FORMATS
from tests.conftest import DATA_DIR, fit_service

GB, GIB = 1e9, 2**30

# Published checkpoint sizes with their sources: one table, the benchmark's (anchorgpu bench fit prints it)
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
