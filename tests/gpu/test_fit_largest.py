"""The fit the other way round: the largest catalog models a GPU runs, one per weight format."""

from __future__ import annotations

import pytest

from gpu.data import GpuData
from gpu.fit.largest import LARGEST_FORMATS, family_named, language_models, largest_fitting
from gpu.fit.service import FitService
from infra.settings import REPO_ROOT

FIT = FitService(GpuData(REPO_ROOT / "data"))


@pytest.mark.parametrize(("gpu_id", "count", "family"), [("rtx-4090", 1, None), ("t4", 1, "llama"),
                                                         ("l40s", 1, None), ("h100-sxm", 8, None),
                                                         ("a100-80gb", 1, "qwen")])
def test_each_answer_fits_and_the_next_larger_model_does_not(gpu_id: str, count: int, family: str | None) -> None:
    results = largest_fitting(FIT, gpu_id, count, family)
    assert results, "something in the catalog fits every one of these"
    models = language_models(FIT, family)
    for result in results:
        assert result.fits and result.request.gpu.id == gpu_id and result.request.gpu_count == count
        assert family is None or result.request.model.family == family
        # every larger model of the catalog does not fit in this format: the answer is the largest
        larger = [m for m in models if m.params > result.request.model.params]
        for model in larger:
            assert not FIT.fit(f"{model.id} {result.request.quant} on {count}x {gpu_id}").fits, model.id
    assert [r.request.quant for r in results] == [f for f in LARGEST_FORMATS if f in {r.request.quant for r in results}]
    # a smaller format shows a larger model or nothing: never the same one twice
    assert len({r.request.model.id for r in results}) == len(results)


def test_four_bit_weights_fit_a_larger_model_than_sixteen_bit_ones() -> None:
    bf16, q4 = largest_fitting(FIT, "rtx-4090")
    assert q4.request.model.params > bf16.request.model.params


@pytest.mark.parametrize(("text", "family"), [("какую самую большую ламу потянет", "llama"),
                                              ("largest qwen on a 4090", "qwen"), ("самый большой квен", "qwen"),
                                              ("biggest model on a 4090", None)])
def test_the_family_asked_for(text: str, family: str | None) -> None:
    assert family_named(FIT, text) == family
