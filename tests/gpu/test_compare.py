"""GPU comparisons: the aspect a question asks about, and the winner each aspect's documented rule picks from
the shipped catalog (data/gpus.yaml) and price list (data/prices.yaml)."""

from __future__ import annotations

import dataclasses
import itertools
from decimal import ROUND_HALF_UP, Decimal

import pytest

from gpu.catalog import GPUSpec, UnknownNameError
from gpu.compare import DECIDING_ASPECTS, aspect_asked, compare_gpus, decide, fastest_rented
from tests.conftest import gpu_data

DATA = gpu_data()
CATALOG = DATA.gpus


def _id(name: str) -> str:
    """The id a customer's spelling resolves to, as the reply pipeline will resolve it."""
    return CATALOG.resolve(name).id


def _ratio(high: float, low: float) -> Decimal:
    return (Decimal(repr(high)) / Decimal(repr(low))).quantize(Decimal("0.01"), ROUND_HALF_UP)


@pytest.mark.parametrize(("text", "aspect"), [
    ("что быстрее для инференса: H100 или A100?", "inference"),
    ("h200 vs h100", "general"),
    ("что лучше для обучения, 4090 или A100 40gb?", "training"),
    ("which has more memory, L40S or A6000", "memory"),
    ("чем отличается H100 от H200", "general"),
    ("which is faster, H100 or A100?", "general"),
    ("H100 or A100 for LLM serving?", "inference"),
    ("что лучше для генерации текста", "inference"),
    ("decode speed of h200 vs mi300x", "inference"),
    ("где больше видеопамяти: 4090 или 3090", "memory"),
    ("more VRAM: 4090 or 5090?", "memory"),
    ("что выбрать для дообучения llama", "training"),
    ("best gpu to fine-tune a 7B model", "training"),
    ("finetuning on a100 or h100", "training"),
    ("pretraining throughput h100 vs b200", "training"),
    ("ОБУЧЕНИЕ на A100 или H100?", "training"),
    # the bandwidth phrase is the inference figure, not a memory-size question
    ("у какой больше пропускная способность памяти, H100 или A100", "inference"),
    ("which has higher memory bandwidth", "inference"),
    # the first job word decides
    ("больше памяти для обучения", "memory"),
    ("для обучения, где больше памяти", "training"),
    # a word that merely contains a stem is not that word
    ("the server room has h100s", "general"),
    ("regenerate the list", "general"),
])
def test_aspect_asked_reads_word_classes(text: str, aspect: str) -> None:
    assert aspect_asked(text) == aspect


def test_h100_vs_a100_each_aspect() -> None:
    h100, a100 = _id("H100"), _id("A100")
    specs = CATALOG.get(h100), CATALOG.get(a100)
    inference = compare_gpus(DATA, [h100, a100], "inference")
    assert inference.leader == "h100-sxm" and inference.runner_up == a100
    assert inference.basis == "bandwidth_gb_s"
    assert inference.figures == (specs[0].bandwidth_gb_s, specs[1].bandwidth_gb_s)
    assert inference.ratio == _ratio(specs[0].bandwidth_gb_s, specs[1].bandwidth_gb_s)
    training = compare_gpus(DATA, [h100, a100], "training")
    assert training.leader == "h100-sxm" and training.basis == "bf16_tflops"
    assert specs[0].bf16_tflops is not None and specs[1].bf16_tflops is not None
    assert training.ratio == _ratio(specs[0].bf16_tflops, specs[1].bf16_tflops)
    # both are 80 GB cards: a tie, not an arbitrary winner
    memory = compare_gpus(DATA, [h100, a100], "memory")
    assert specs[0].memory_gb == specs[1].memory_gb
    assert memory.leader is None and memory.ratio is None and memory.tied == (h100, a100)


def test_h200_vs_h100() -> None:
    h200, h100 = CATALOG.get(_id("h200")), CATALOG.get(_id("h100"))
    ids = [h200.id, h100.id]
    inference = compare_gpus(DATA, ids, "inference")
    assert inference.leader == "h200" and inference.ratio == _ratio(h200.bandwidth_gb_s, h100.bandwidth_gb_s)
    memory = compare_gpus(DATA, ids, "memory")
    assert memory.leader == "h200" and memory.ratio == _ratio(h200.memory_gb, h100.memory_gb)
    training = compare_gpus(DATA, ids, "training")  # the same Hopper tensor cores
    assert h200.bf16_tflops == h100.bf16_tflops
    assert training.leader is None and training.tied == ("h200", "h100-sxm")
    general = compare_gpus(DATA, ids, "general")
    assert general.leader is None and general.basis is None and general.ratio is None and general.figures == ()
    assert general.verdict_for("inference") == inference.verdict()


def test_4090_vs_a100_40gb() -> None:
    ids = [_id("4090"), _id("a100 40gb")]
    assert ids == ["rtx-4090", "a100-40gb"]
    for aspect in DECIDING_ASPECTS:
        assert compare_gpus(DATA, ids, aspect).leader == "a100-40gb", aspect
    training = compare_gpus(DATA, ids, "training")
    assert training.figures == (CATALOG.get("rtx-4090").bf16_tflops, CATALOG.get("a100-40gb").bf16_tflops)


def test_a_gpu_without_bf16_compares_fp16_for_all() -> None:
    v100, a100 = CATALOG.get(_id("v100")), CATALOG.get(_id("a100"))
    assert v100.bf16_tflops is None and v100.fp8_tflops is None and v100.fp16_tflops is not None
    training = compare_gpus(DATA, [v100.id, a100.id], "training")
    assert training.basis == "fp16_tflops"
    assert training.figures == (v100.fp16_tflops, a100.fp16_tflops)
    assert training.leader == a100.id
    t4, l4 = CATALOG.get(_id("t4")), CATALOG.get(_id("l4"))
    assert compare_gpus(DATA, [t4.id, l4.id], "training").leader == l4.id
    # the older T4 has the (slightly) higher bandwidth: the rule is the figure, not the generation
    faster = max((t4, l4), key=lambda spec: spec.bandwidth_gb_s)
    assert compare_gpus(DATA, [t4.id, l4.id], "inference").leader == faster.id


def test_prices_come_from_the_price_list_and_a_gpu_not_rented_has_none() -> None:
    rented = DATA.prices.rentable_ids()
    assert "v100-16gb" not in rented and "h100-sxm" in rented
    comparison = compare_gpus(DATA, ["h100-sxm", "v100-16gb"], "general")
    assert comparison.prices == (DATA.prices.on_demand("h100-sxm"), None)
    assert isinstance(comparison.prices[0], Decimal)
    assert comparison.price_of("v100-16gb") is None
    assert comparison.currency == DATA.prices.current().currency
    assert comparison.example_prices == DATA.prices.current().example


def test_three_gpus_in_the_order_named() -> None:
    ids = ["a100-80gb", "h200", "h100-sxm"]
    comparison = compare_gpus(DATA, ids, "inference")
    assert comparison.ids == tuple(ids)
    assert comparison.leader == "h200" and comparison.runner_up == "h100-sxm"
    h200, h100 = CATALOG.get("h200"), CATALOG.get("h100-sxm")
    assert comparison.ratio == _ratio(h200.bandwidth_gb_s, h100.bandwidth_gb_s)


def test_a_repeated_id_counts_once() -> None:
    comparison = compare_gpus(DATA, ["a100-80gb", "h100-sxm", "a100-80gb"], "memory")
    assert comparison.ids == ("a100-80gb", "h100-sxm")


@pytest.mark.parametrize("ids", [[], ["h100-sxm"], ["h100-sxm", "h100-sxm"]])
def test_fewer_than_two_distinct_gpus_is_refused(ids: list[str]) -> None:
    with pytest.raises(ValueError, match="at least two different GPUs"):
        compare_gpus(DATA, ids, "general")


def test_an_unknown_id_or_aspect_is_refused() -> None:
    with pytest.raises(UnknownNameError) as caught:
        compare_gpus(DATA, ["h100-sxm", "h1000"], "inference")
    assert isinstance(caught.value, ValueError) and caught.value.suggestions
    with pytest.raises(ValueError, match="unknown aspect"):
        compare_gpus(DATA, ["h100-sxm", "h200"], "speed")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compare_gpus(DATA, "h100-sxm", "inference")


def test_every_catalog_pair_the_leader_has_the_top_figure() -> None:
    """The rule holds over the whole catalog: the leader's figure is the largest, the ratio at least 1."""
    for left, right in itertools.combinations(CATALOG.all(), 2):
        for aspect in DECIDING_ASPECTS:
            verdict = decide((left, right), aspect)
            assert verdict.basis is not None
            values = [getattr(spec, verdict.basis) for spec in (left, right)]
            if values[0] == values[1]:
                assert verdict.leader is None and verdict.tied == (left.id, right.id)
                continue
            winner = (left, right)[values.index(max(values))]
            assert verdict.leader == winner.id and verdict.ratio is not None and verdict.ratio >= 1


def _spec(gpu_id: str, bf16_tflops: float | None, fp16_tflops: float | None) -> GPUSpec:
    return dataclasses.replace(CATALOG.get("h100-sxm"), id=gpu_id, name=gpu_id, bf16_tflops=bf16_tflops,
                               fp16_tflops=fp16_tflops)


def test_missing_figures_decide_nothing() -> None:
    blank = _spec("blank", bf16_tflops=None, fp16_tflops=None)
    other = _spec("other", bf16_tflops=None, fp16_tflops=100.0)
    verdict = decide((blank, other), "training")
    assert verdict.basis == "fp16_tflops" and verdict.leader is None and verdict.tied == ()
    # a third GPU with a figure still ranks against the one that has it
    third = _spec("third", bf16_tflops=None, fp16_tflops=50.0)
    verdict = decide((blank, other, third), "training")
    assert verdict.leader == "other" and verdict.runner_up == "third" and verdict.ratio == Decimal("2.00")


@pytest.mark.parametrize("aspect", ["inference", "training", "memory", "general"])
def test_the_fastest_rented_gpus_lead_on_the_figure_the_job_is_decided_by(aspect: str) -> None:
    data = gpu_data()
    chosen = fastest_rented(data, aspect)  # type: ignore[arg-type]
    rented = [data.gpus.get(gpu_id) for gpu_id in data.prices.rentable_ids()]
    assert 2 <= len(chosen) <= 4 and len(set(chosen)) == len(chosen)
    assert set(chosen) <= {spec.id for spec in rented}
    figures = {"inference": ["bandwidth_gb_s"], "training": ["bf16_tflops"], "memory": ["memory_gb"],
               "general": ["bandwidth_gb_s", "bf16_tflops"]}[aspect]
    for figure in figures:  # the leader on each deciding figure is among them
        assert max(rented, key=lambda spec: getattr(spec, figure)).id in chosen
    compare_gpus(data, chosen, aspect)  # type: ignore[arg-type]  # and they compare


def test_sets_of_gpus_are_decided_by_their_totals() -> None:
    """"8x a100 or 4x h100": one A100 has more memory per dollar, but the sets are what is asked about."""
    a100, h100 = CATALOG.get("a100-80gb"), CATALOG.get("h100-sxm")
    assert a100.bf16_tflops is not None and h100.bf16_tflops is not None
    training = compare_gpus(DATA, [a100.id, h100.id], "training", [8, 4])
    assert training.in_sets and training.count_of(a100.id) == 8
    assert training.figures == (a100.bf16_tflops * 8, h100.bf16_tflops * 4)
    assert training.leader == h100.id and training.ratio == _ratio(h100.bf16_tflops * 4, a100.bf16_tflops * 8)
    memory = compare_gpus(DATA, [a100.id, h100.id], "memory", [8, 4])
    assert memory.leader == a100.id and memory.figures == (640, 320)
    assert not compare_gpus(DATA, [a100.id, h100.id], "memory").in_sets
    with pytest.raises(ValueError):
        compare_gpus(DATA, [a100.id, h100.id], "memory", [8])
