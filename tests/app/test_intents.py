"""One intent classifier for every front: prices, rules, fit and GPU specs never reach the model."""

from __future__ import annotations

import pytest

from app.intents import IntentClassifier, spec_fields_asked
from gpu.fit.service import FitService
from gpu.prices import Term
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.conftest import DATA_DIR, gpu_data

DATA = gpu_data()
INTENTS = IntentClassifier(DATA, FitService(DATA), RuleBook(DATA_DIR, glossary_file(DATA_DIR)))


@pytest.mark.parametrize(("text", "kind"), [
    ("/fit llama-3.1-70b 2xh100", "command"),
    ("сколько стоит H100 в час?", "price"),
    ("how much does an A100 cost per hour?", "price"),
    ("можно ли остановить аренду и не платить за оставшуюся неделю?", "rule"),
    ("if I stop my rental, will I still be charged?", "rule"),
    ("влезет ли mixtral в две A100?", "fit"),
    ("сколько памяти у H100?", "gpu_spec"),
    ("what is the memory bandwidth of the MI300X?", "gpu_spec"),
    ("что такое NVLink?", "glossary"),
    ("how does PagedAttention reduce fragmentation?", "glossary"),
    # how much memory a model needs is the fit engine's (the model once answered with the H200's 141 GB)
    ("сколько памяти нужно для llama 3 70b?", "fit"),
    ("how much memory does llama 3.1 8b need?", "fit"),
    ("what GPU do I need for a 70B model?", "fit"),
    ("какая видеокарта нужна для qwen2.5 7b?", "fit"),
    ("how much memory does the H100 have?", "gpu_spec"),
    ("сколько памяти занимает KV-кэш?", "glossary"),
    ("Can I cancel my rental early and get a refund?", "rule"),
    # discounts and whether a GPU is rented are the price list's (the model once said «скидка за месяц — 30%»)
    ("какая скидка за месяц аренды?", "price"),
    ("is there a discount for a monthly rental?", "price"),
    ("можно ли арендовать B200?", "price"),
    ("do you have H200?", "price"),
    ("если я арендовал H100 и остановлю его, придётся платить?", "rule"),
    ("is FP8 available on the A100?", "gpu_spec"),
])
def test_classification(text: str, kind: str) -> None:
    assert INTENTS.classify(text).kind == kind


def test_a_spec_question_about_a_family_covers_its_variants_and_asks_the_right_field() -> None:
    intent = INTENTS.classify("сколько памяти у H100?")
    assert intent.gpu_ids[0] == "h100-sxm" and "h100-pcie" in intent.gpu_ids
    assert intent.spec_fields == ("memory",)
    assert INTENTS.classify("what is the memory bandwidth of the MI300X?").spec_fields == ("bandwidth",)


def test_a_follow_up_spec_question_takes_its_gpu_from_the_previous_question() -> None:
    intent = INTENTS.classify_question("а какая у неё пропускная способность?", ["что такое H200?"])
    assert intent.kind == "gpu_spec" and intent.gpu_ids == ("h200",) and intent.spec_fields == ("bandwidth",)
    assert INTENTS.classify_question("а какая у неё пропускная способность?").kind == "glossary"
    chained = INTENTS.classify_question("а сколько у неё памяти?",
                                        ["а какая у неё пропускная способность?", "что такое H200?"])
    assert chained.kind == "gpu_spec" and chained.gpu_ids == ("h200",), "across follow-ups that name none"
    moved_on = INTENTS.classify_question("а сколько у неё памяти?", ["что такое KV cache?", "что такое H200?"])
    assert moved_on.kind == "glossary", "not across a question on something else"


def test_a_gpu_that_is_not_rented_is_said_to_be_so_and_discounts_come_from_the_price_list() -> None:
    from app.views.prices import render_price_answer

    intent = INTENTS.classify("можно ли арендовать B200?")
    assert intent.gpu_ids == () and intent.unpriced == ("b200",)
    text = render_price_answer(intent, DATA, "ru")
    assert "B200" in text and "не сдаётся в аренду" in text
    discounts = render_price_answer(INTENTS.classify("какая скидка за месяц аренды?"), DATA, "ru")
    prices = DATA.prices.current()
    month = {format(price.term_discount_percent[Term.MONTH].normalize(), "f") for price in prices.gpus.values()}
    assert all(f"месяц −{percent}%" in discounts for percent in month), discounts


@pytest.mark.parametrize(("text", "example"), [("сколько стоит одна 4090 в час", "«2 RTX 4090 на неделю»"),
                                              ("цена mi300x", "«2 MI300X на неделю»")])
def test_a_price_s_example_of_a_total_names_the_gpu_as_a_customer_writes_it(text: str, example: str) -> None:
    from app.views.prices import render_price_answer

    assert example in render_price_answer(INTENTS.classify(text), DATA, "ru")


@pytest.mark.parametrize("text", ["учу на 4090, на backward вылетает CUDA out of memory, что делать?",
                                  "a100 keeps hitting OOM during training", "нехватка видеопамяти на l4 при генерации"])
def test_an_out_of_memory_error_is_not_a_question_about_the_memory_size(text: str) -> None:
    assert "memory" not in spec_fields_asked(text)


@pytest.mark.parametrize("text", ["сколько памяти у 4090?", "h100 memory?", "how much memory does the a100 have"])
def test_the_memory_asked_is_still_a_spec_field(text: str) -> None:
    assert "memory" in spec_fields_asked(text)
