"""One grammar for "which GPU and how many", read the same way by /fit and /quote."""

from __future__ import annotations

import pytest

from gpu.catalog import GPUCatalog, load_gpu_catalog
from gpu.data import GpuData
from gpu.fit.quant import WEIGHT_FORMATS, normalize_quant
from gpu.fit.service import FitService
from gpu.quote.request import parse_quote_text
from gpu.request_words import count_value, read_gpu
from tests.conftest import DATA_DIR, fit_service, notes_en

FORMS = [
    ("h200 x4", "h200", 4), ("h200x4", "h200", 4), ("h200 × 4", "h200", 4), ("4x h200", "h200", 4),
    ("4xh200", "h200", 4), ("4×H200", "h200", 4), ("4 h200", "h200", 4), ("h200 4 шт", "h200", 4),
    ("h200 4 cards", "h200", 4), ("четыре h100", "h100-sxm", 4), ("две 4090", "rtx-4090", 2),
    ("2 карты 4090", "rtx-4090", 2), ("8 x a100 40gb", "a100-40gb", 8), ("rtx 6000 ada x2", "rtx-6000-ada", 2),
]


@pytest.fixture(scope="module")
def catalog() -> GPUCatalog:
    return load_gpu_catalog(DATA_DIR)


@pytest.fixture(scope="module")
def service() -> FitService:
    return fit_service()


@pytest.mark.parametrize(("words", "gpu", "count"), FORMS)
def test_fit_reads_every_form(service: FitService, words: str, gpu: str, count: int) -> None:
    result = service.fit(f"llama-3.1-8b {words}")
    assert (result.gpu.id, result.request.gpu_count) == (gpu, count)
    assert result.request.count_given
    assert not any("Ignored" in note or "understand" in note for note in notes_en(result))


@pytest.mark.parametrize(("words", "gpu", "count"), FORMS)
def test_quote_reads_every_form(catalog: GPUCatalog, words: str, gpu: str, count: int) -> None:
    request = parse_quote_text(f"{words} 3 days", catalog).request
    assert (request.gpu_id, request.gpu_count, request.duration.hours) == (gpu, count, 72)


def test_mention_spans_and_no_false_counts(catalog: GPUCatalog) -> None:
    tokens = ["mixtral", "8x7b", "q4", "на", "одной", "3090"]
    assert [read_gpu(tokens, i, catalog.find) for i in range(3)] == [None, None, None]  # 8x7b is no count
    mention = read_gpu(tokens, 4, catalog.find)
    assert mention is not None and (mention.gpu.id, mention.count, mention.end) == ("rtx-3090", 1, 6)
    bare = read_gpu(["h100"], 0, catalog.find)
    assert bare is not None and bare.count is None


# a memory size after a GPU's name picks its variant; said alone, of a card, it is the catalog's first GPU of
# that memory (24 GB: RTX 4090, 16 GB: T4, 48 GB: L40S)
MEMORY_FORMS = [
    ("a100 на 40 гб", "a100-40gb", 1), ("a100 with 40gb", "a100-40gb", 1), ("a100 с 40 гб", "a100-40gb", 1),
    ("on a 24gb card", "rtx-4090", 1), ("на карте с 24 гб", "rtx-4090", 1), ("24 гб видеопамяти", "rtx-4090", 1),
    ("two 24gb cards", "rtx-4090", 2), ("2 карты по 24 гб", "rtx-4090", 2), ("with 16gb vram", "t4", 1),
    ("на видеокарту 48 гб", "l40s", 1), ("хватит ли 80 гигов", "h100-sxm", 1), ("is 24gb enough", "rtx-4090", 1),
    ("24 гига хватит", "rtx-4090", 1),
    # the memory one has: «у меня есть 24 гига», "i have 48gb"
    ("у меня есть 24 гига", "rtx-4090", 1), ("i have 48gb of vram", "l40s", 1),
]


@pytest.mark.parametrize(("words", "gpu", "count"), MEMORY_FORMS)
def test_a_memory_size_names_a_variant_or_a_card(service: FitService, words: str, gpu: str, count: int) -> None:
    result = service.fit(f"llama-3.1-8b {words}")
    assert (result.gpu.id, result.request.gpu_count) == (gpu, count)
    assert not any("Ignored" in note or "understand" in note for note in notes_en(result))


def test_a_size_a_model_is_put_into_is_a_card_but_other_sizes_are_not(service: FitService,
                                                                       catalog: GPUCatalog) -> None:
    assert service.fit("влезет ли llama 3 8b в 24 гб").gpu.id == "rtx-4090"  # said last: what it goes into
    assert service.fit("модель 13b не лезет в мои 12 гб").gpu.id == "rtx-3060-12gb"
    # the memory one has («в мои», "in my") is a card wherever it is said, not only last
    assert service.fit("модель 13b не лезет в мои 12 гб. читал про оффлоадинг — сильно тормозит?").gpu.id \
        == "rtx-3060-12gb"
    assert service.fit("llama 70b in my 24gb, how slow would offloading be?").gpu.id == "rtx-4090"
    # the model's own size said beside its name picks the catalog model of that size
    assert service.fit("deepseek r1 distill 32b").request.model.id == "deepseek-r1-distill-qwen-32b"
    assert service.fit("deepseek r1 on 8 h200").request.model.id == "deepseek-r1"
    # no catalog GPU has 20 GB: not a card; a duration stays a duration; "a100 на 2 недели" is the A100
    assert read_gpu(["в", "20", "гб"], 0, catalog.find) is None
    request = parse_quote_text("a100 на 2 недели", catalog).request
    assert (request.gpu_id, request.duration.hours) == ("a100-80gb", 336)
    assert read_gpu(["в", "24", "гб", "модели"], 0, catalog.find) is None  # the model's size, not a card
    # memory one has of another store: RAM, a disk, data
    assert read_gpu(["есть", "64", "гб", "оперативки"], 0, catalog.find) is None
    assert read_gpu(["have", "24gb", "of", "data"], 0, catalog.find) is None


def test_unknown_words_get_did_you_mean(service: FitService) -> None:
    notes = notes_en(service.fit("llama-3.1-8b h100 lroa"))
    assert any("“lroa”" in note and "lora" in note for note in notes)
    ru = [n.render("ru") for n in service.fit("llama-3.1-8b h100 lroa").notes]
    assert any("«lroa»" in note and "lora" in note for note in ru)
    # a name with nothing close: said plainly, never dropped silently
    assert any("ignored: zx9000" in note for note in notes_en(service.fit("llama-3.1-8b h100 zx9000")))
    # an ordinary word is not a name: customers write in free words (tests/gpu/test_fit_notes.py)
    assert not any("zebra" in note for note in notes_en(service.fit("llama-3.1-8b h100 zebra")))


@pytest.mark.parametrize(("alias", "fmt"), [
    ("q4", "q4_k_m"), ("4bit", "nf4"), ("int4", "awq"), ("awq", "awq"), ("gptq", "gptq"), ("mxfp4", "mxfp4"),
    ("nf4", "nf4"), ("fp8", "fp8"), ("int8", "int8"), ("q8", "q8_0"),
])
def test_quant_aliases(alias: str, fmt: str) -> None:
    assert normalize_quant(alias) == fmt
    assert fmt in WEIGHT_FORMATS


def test_quote_offers_rented_gpus_first(catalog: GPUCatalog) -> None:
    from gpu.quote.request import QuoteInputError

    rentable = list(GpuData(DATA_DIR).prices.rentable_ids())
    with pytest.raises(QuoteInputError) as info:
        parse_quote_text("h1000 x2 3 days", catalog, rentable=rentable)
    offered = info.value.suggestions
    assert offered[0] == "h100-sxm" and "h100-nvl" in offered  # the one we only describe comes last
    assert offered.index("h100-nvl") > max(offered.index(g) for g in offered if g in rentable)
    with pytest.raises(QuoteInputError) as info:
        parse_quote_text("x2 3 days", catalog, rentable=rentable)
    assert info.value.suggestions == rentable


@pytest.mark.parametrize(("word", "value"), [("восьмерка", 8), ("восьмёрку", 8), ("четвёрка", 4), ("двойку", 2)])
def test_a_collective_numeral_counts_only_right_before_a_gpu(word: str, value: int) -> None:
    """«восьмерка h200» is eight of them; «тройка лидеров» elsewhere is no count."""
    assert count_value(word, weak=True) == value
    assert count_value(word) is None
