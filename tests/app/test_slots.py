"""What a message names, read by the domain's parsers (app.slots)."""

from __future__ import annotations

import pytest

from app.slots import read_slots
from gpu.data import GpuData
from gpu.fit.service import FitService
from infra.settings import REPO_ROOT

DATA = GpuData(REPO_ROOT / "data")
FIT = FitService(DATA)


@pytest.mark.parametrize(("text", "expected"), [
    ("can I run deepseek-r1 671b on 8x H200?", {"model": "deepseek-r1", "gpus": ["h200"], "count": 8}),
    ("Можно ли запустить Stable Diffusion XL на RTX 4090?", {"model": "sdxl", "gpus": ["rtx-4090"]}),
    ("a100 40gb или 80gb для llama 13b fp16?", {"model": "13b", "gpus": ["a100-40gb", "a100-80gb"]}),
    ("is the h100 pcie slower than sxm for llm inference?", {"gpus": ["h100-pcie", "h100-sxm"]}),  # "than" a variant
    ("сколько будет стоить 4 x A100 на 2 недели?", {"gpus": ["a100-80gb"], "count": 4, "hours": 336}),
    ("сколько стоит арендовать 8 H100 на месяц со скидкой?",
     {"gpus": ["h100-sxm"], "count": 8, "hours": 720, "pricing": "committed"}),
    ("посчитай аренду одной H200 на неделю", {"gpus": ["h200"], "count": 1, "hours": 168}),
    ("how much for two l40s for 45 days spot", {"gpus": ["l40s"], "count": 2, "hours": 1080, "pricing": "spot"}),
    ("Хватит ли одной H100 чтобы дообучить llama 3 8b с LoRA?",
     {"model": "llama-3-8b", "gpus": ["h100-sxm"], "count": 1}),
])
def test_slots_of_customer_messages(text: str, expected: dict[str, object]) -> None:
    assert read_slots(text, FIT).to_json() == expected


@pytest.mark.parametrize(("text", "expected"), [
    # model families typed in Cyrillic, a version letter too
    ("потянет ли пара 4090 ламу 3.1 70б", {"model": "llama-3.1-70b", "gpus": ["rtx-4090"], "count": 2}),
    ("дипсик р1 влезет в 8 h200?", {"model": "deepseek-r1", "gpus": ["h200"], "count": 8}),
    # a pricing word the customer does not want, on-demand in Cyrillic, a commitment in other words
    ("две h100 на неделю, не спот", {"gpus": ["h100-sxm"], "count": 2, "hours": 168}),
    ("4 l40s на месяц, без резерва, он-деманд", {"gpus": ["l40s"], "count": 4, "hours": 720, "pricing": "on-demand"}),
    ("одна h200 на месяц с обязательством", {"gpus": ["h200"], "count": 1, "hours": 720, "pricing": "committed"}),
    # a count written apart from the GPU: asked as enough, after the unit, "a pair of them"
    ("qwen 72b на h100, 4 хватит?", {"model": "qwen2.5-72b", "gpus": ["h100-sxm"], "count": 4}),
    ("is a 5090 enough for sdxl", {"model": "sdxl", "gpus": ["rtx-5090"]}),
    ("mixtral 8x7b на a100, карты две", {"model": "mixtral-8x7b", "gpus": ["a100-80gb"], "count": 2}),
    # a greeting and a rate are not durations
    ("Добрый день! Нужно 2 h200 на неделю", {"gpus": ["h200"], "count": 2, "hours": 168}),
    ("почем час l4?", {"gpus": ["l4"]}),
    # GPUs' own numbers in a row are GPUs, not a count of the next; «по 8 штук» is so many images at a time
    ("compare 3090, 4090 and 5090 for training speed", {"gpus": ["rtx-3090", "rtx-4090", "rtx-5090"]}),
    ("4090 или 3090 брать под sdxl? генерю картинки пачками по 8 штук",
     {"model": "sdxl", "gpus": ["rtx-4090", "rtx-3090"]}),
    ("qwen3 32b на л40с потянет?", {"model": "qwen3-32b", "gpus": ["l40s"]}),
    # the pricing in two words or said as the usual price, a negation a word away, a team's «восьмерка»
    ("price for two a10g for 10 hours on demand", {"gpus": ["a10g"], "count": 2, "hours": 10, "pricing": "on-demand"}),
    ("пару h100 на 3 дня, по обычной цене, без всяких резервов",
     {"gpus": ["h100-sxm"], "count": 2, "hours": 72, "pricing": "on-demand"}),
    ("2 h200 for a week, without any reservation", {"gpus": ["h200"], "count": 2, "hours": 168}),
    ("сколько стоит восьмерка h200 на сутки", {"gpus": ["h200"], "count": 8, "hours": 24}),
    # the same length said twice is one length; two different ones add up
    ("need 3 rtx 4090 for a weekend hackathon, so like 2 days, whats the total cost?",
     {"gpus": ["rtx-4090"], "count": 3, "hours": 48}),
    ("2 h100 на 1 неделю и 2 дня", {"gpus": ["h100-sxm"], "count": 2, "hours": 216}),
    # a commitment's term is the rental; the month beside it is what the price is asked per (had been summed)
    ("сколько стоит держать 4 a100 80gb месяц с коммитом на полгода",
     {"gpus": ["a100-80gb"], "count": 4, "hours": 4320, "pricing": "committed"}),
    ("monthly cost of 8 h100 if we commit for a year", {"gpus": ["h100-sxm"], "count": 8, "hours": 8760, "years": 1,
                                                          "pricing": "committed"}),
])
def test_slots_written_the_way_customers_write(text: str, expected: dict[str, object]) -> None:
    assert read_slots(text, FIT).to_json() == expected


def test_a_price_per_hour_is_a_rate_not_a_one_hour_rental() -> None:
    for text in ("сколько стоит H100 в час?", "h100 price per hour", "what's the hourly rate of an a100"):
        assert read_slots(text, FIT).duration is None, text
    assert read_slots("h100 на 3 часа", FIT).to_json()["hours"] == 3


def test_absurd_amounts_are_read_so_that_the_reply_can_refuse_them() -> None:
    assert read_slots("сколько стоит 10000 H100 на неделю", FIT).count == 10000
    assert read_slots("аренда A100 на 500 лет", FIT).years == 500
    assert read_slots("rent an h100 for 500 years", FIT).years == 500


def test_nothing_is_invented() -> None:
    slots = read_slots("привет, что ты умеешь?", FIT)
    assert slots.to_json() == {}


@pytest.mark.parametrize("text", ["как называется эта часть работы?", "часто падает обучение, почему?",
                                  "какая частота у памяти h100?"])
def test_words_that_start_like_an_hour_are_no_duration(text: str) -> None:
    assert read_slots(text, FIT).duration is None


@pytest.mark.parametrize("text", ["гоняю qwen 32b на двух 3090, после часа работы память забита",
                                  "after 2 hours it crashes on my h100",
                                  "after a few days of training the loss spikes"])
def test_a_moment_of_a_run_is_no_rental_length(text: str) -> None:
    assert read_slots(text, FIT).duration is None
