"""Fuzzing the text parsers and their renderers: /quote, durations, /fit.

Whatever a user types, the parsers either return a valid request or raise their own input error, and the
reply built from either is valid Telegram HTML that the splitter keeps under 4096 characters per message.
Anything else (KeyError, ZeroDivisionError, InvalidOperation, OverflowError…) is a bug.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.views.fit import render, render_error
from app.views.quote import render_input_error, render_quote
from bot.output.rendering import split_html
from dev.telegram_stub import parse_html, visible_length
from gpu.catalog import load_gpu_catalog
from gpu.fit.request import FitInputError
from gpu.quote.duration import DurationError, parse_duration
from gpu.quote.request import QuoteInputError, parse_quote_text
from gpu.quote.service import QuoteService
from infra.db import create_engine
from infra.markup import HTML
from tests.conftest import DATA_DIR, fit_service, gpu_data

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CATALOG = load_gpu_catalog(DATA_DIR)
FIT = fit_service()
# preview() prices without storing: the engine is created lazily and never connects here
PURE_QUOTES = QuoteService(create_engine("sqlite+aiosqlite:///:memory:"), gpu_data())
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)

# Words the grammars know, so that examples reach deep branches rather than failing at the first token.
GPU_WORDS = [*CATALOG.ids(), "h100", "H100 SXM", "a100", "4090", "mi300x", "l40s", "h200", "a100 80gb", "b200",
             "nvidia", "rtx"]
COUNT_WORDS = ["x8", "8x", "×4", "*2", "x", "8", "0", "-1", "99999", "x0", "count=3", "gpus=10000", "2", "gpu", "карты"]
DURATION_WORDS = ["2 weeks", "1 month", "45 days", "3 hours", "1,5", "0.5", "1.25h", "90 min", "неделя",
                  "2 недели", "месяц", "0 days", "999999 months", "1e9 hours", "and", "plus", "+", ",",
                  "1 month 2 weeks", "полтора", "year", "years", "0,0001", "-3 days", "∞"]
PRICING_WORDS = ["spot", "on-demand", "committed", "по требованию", "pricing=spot", "pricing=bogus",
                 "type=", "тариф=спот", "reserved"]
KEY_WORDS = ["key=abc", "key=", "ключ=x", "key=" + "k" * 300, "KEY=A B"]
FIT_WORDS = ["llama-3.1-70b", "llama-3.1-8b", "mixtral", "qwen2.5-7b", "70b", "0b", "1e30b", "999999b",
             "q4_k_m", "fp16", "int4", "fp8", "q2", "2xH100", "8x a100", "ctx=32k", "ctx=0", "ctx=99999999999",
             "batch=0", "batch=1000000", "kv=fp8", "kv=bogus", "lora", "qlora", "train", "tp=3", "pp=0",
             "1024x1024", "4 images", "sdxl", "flux", "tiling", "влезет", "в две", "A100", "?", "=", "x", "ctx=",
             "optimizer=adamw", "seq=4k", "images=0"]


def _sentence(words: list[str]) -> st.SearchStrategy[str]:
    token = st.one_of(st.sampled_from(words), ANY_TEXT.map(lambda s: s[:20]))
    return st.lists(token, min_size=0, max_size=10).map(" ".join)


def assert_telegram_html(html_text: str) -> None:
    """What the bot would send: valid HTML, and every chunk of the splitter within Telegram's limit."""
    parse_html(html_text)
    chunks = split_html(html_text)
    assert chunks or not parse_html(html_text).strip()
    for chunk in chunks:
        assert 0 < visible_length(chunk, "HTML") <= 4096


# ---- /quote ------------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(ANY_TEXT, _sentence(GPU_WORDS + COUNT_WORDS + DURATION_WORDS + PRICING_WORDS + KEY_WORDS)),
       st.sampled_from(["ru", "en"]))
@example("h100 x8 999999 months", "en")
@example("h100 x99999 2 weeks", "ru")
@example("key=a key=b h100 1 day", "en")
@example("h100 0,0001 hours", "en")
@example("h100 x ¹ 2 weeks", "en")
@example("¹ gpu h100 2 weeks", "en")
@example("h100 x " + "9" * 5000 + " 2 weeks", "en")
def test_quote_parser_accepts_or_explains(text: str, lang: str) -> None:
    try:
        parsed = parse_quote_text(text, CATALOG)
    except QuoteInputError as exc:
        assert_telegram_html(render_input_error(exc, lang, HTML))  # type: ignore[arg-type]
        return
    request = parsed.request
    assert request.gpu_id in CATALOG.ids()
    assert request.gpu_count >= 1
    assert request.duration.hours > 0
    try:
        quote = PURE_QUOTES.preview(request)
    except QuoteInputError as exc:  # over the per-quote limits: explained, not crashed
        assert_telegram_html(render_input_error(exc, lang, HTML))  # type: ignore[arg-type]
        return
    assert isinstance(quote.total, Decimal) and quote.total >= 0
    assert_telegram_html(render_quote(quote, lang, HTML))  # type: ignore[arg-type]


# ---- durations ---------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(ANY_TEXT, _sentence(DURATION_WORDS)))
@example("1" * 400 + " hours")
@example("9" * 6 + " months " * 50)
def test_duration_parser_accepts_or_explains(text: str) -> None:
    try:
        duration = parse_duration(text)
    except DurationError as exc:
        assert str(exc)
        return
    assert duration.hours >= 0
    assert duration.billable_hours >= 1
    assert duration.describe("ru") and duration.describe("en")


# ---- /fit --------------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(ANY_TEXT, _sentence(FIT_WORDS + GPU_WORDS)), st.sampled_from(["ru", "en"]))
@example("llama-3.1-70b ctx=99999999999 batch=1000000 1x h100", "en")
@example("1e30b fp16 64x h100 train", "ru")
@example("0b", "en")
@example("¹!H100", "ru")
@example("¹ images sdxl", "en")
def test_fit_parser_accepts_or_explains(text: str, lang: str) -> None:
    try:
        result = FIT.fit(text)
    except FitInputError as exc:
        assert_telegram_html(render_error(exc, lang, markup=HTML))  # type: ignore[arg-type]
        return
    assert result.per_gpu.total >= 0
    assert_telegram_html(render(result, lang, markup=HTML, currency=FIT.currency))  # type: ignore[arg-type]

