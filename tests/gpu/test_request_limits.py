"""Bad input to /fit and /quote: one clear message (a catalog key and its parameters), never a traceback.

Absurd counts (10,000 GPUs, 0, -3), absurd durations (500 years, 0 hours, -3 days), 4,000 characters,
emoji only and other alphabets. Limits come from data/prices.yaml (max_gpus_per_quote, max_duration_days).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.views.quote import render_input_error
from gpu.catalog import load_gpu_catalog
from gpu.fit.request import FitInputError, ParsedRequest, RequestParser
from gpu.prices import load_price_list
from gpu.quote.duration import DurationError, parse_duration
from gpu.quote.engine import compute_quote
from gpu.quote.request import DEFAULT_MAX_GPUS, MAX_TEXT, QuoteInputError, parse_quote_text
from infra.i18n import t
from tests.conftest import DATA_DIR, fit_service

CATALOG = load_gpu_catalog(DATA_DIR)
PRICES = load_price_list(DATA_DIR, known_gpu_ids=set(CATALOG.ids()))
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
PARSER: RequestParser = fit_service().parser
LONG = "llama-3.1-8b on h100 " + "please " * 570  # about 4,000 characters
EMOJI = "😀🚀🔥"
CHINESE = "能在这张卡上运行吗"
ARABIC = "هل يمكن تشغيل هذا النموذج"


def quote_error(text: str, **kwargs: object) -> QuoteInputError:
    """The one error a quote request ends in: the parser's or, past its grammar, the engine's."""
    try:
        request = parse_quote_text(text, CATALOG, **kwargs).request  # type: ignore[arg-type]
        compute_quote(request, CATALOG.get(request.gpu_id).name, PRICES, NOW)
    except QuoteInputError as exc:
        return exc
    raise AssertionError(f"{text!r} was quoted")


# ---- /quote --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "code", "params"), [
    ("h100 x10000 2 weeks", "bad_count", {"max": PRICES.max_gpus_per_quote}),
    ("10000 h100 2 weeks", "bad_count", {"max": PRICES.max_gpus_per_quote}),
    ("10,000 h100 for a week", "bad_count", {"max": PRICES.max_gpus_per_quote}),
    ("h100 x" + "9" * 400 + " 2 weeks", "bad_count", {"max": PRICES.max_gpus_per_quote}),
    ("h100 x0 2 weeks", "bad_count", {"max": DEFAULT_MAX_GPUS}),
    ("0 h100 2 weeks", "bad_count", {"max": DEFAULT_MAX_GPUS}),
    ("h100 x-3 1 week", "bad_count", {"max": DEFAULT_MAX_GPUS}),
    ("-3 h100 1 week", "bad_count", {"max": DEFAULT_MAX_GPUS}),
    ("h100 x8 for 500 years", "too_long", {"days": PRICES.max_duration_days}),
    ("h100 x8 500 лет", "too_long", {"days": PRICES.max_duration_days}),
    ("h100 x2 999999 months", "too_long", {"days": PRICES.max_duration_days}),
    ("h100 x8 на 0 часов", "zero_duration", {}),
    ("h100 x8 for -3 days", "zero_duration", {}),
    ("h100 x8 1 month -3 days", "zero_duration", {}),
    ("a" * 4000, "text_too_long", {"length": 4000, "limit": MAX_TEXT}),
    (LONG, "text_too_long", {"length": len(LONG), "limit": MAX_TEXT}),
    (EMOJI, "no_gpu", {}),
    (CHINESE, "no_gpu", {}),
    (ARABIC, "no_gpu", {}),
    ("能在H100上运行吗", "no_duration", {}),
    (f"{ARABIC} H100", "no_duration", {}),
    ("", "no_gpu", {}),
])
def test_bad_quote_requests_get_one_clear_error(text: str, code: str, params: dict[str, object]) -> None:
    error = quote_error(text)
    assert error.code == code
    assert params.items() <= error.params.items()
    for lang in ("ru", "en"):  # the fronts say it from the catalog key, in both languages
        rendered = render_input_error(error, lang)
        assert rendered == t(f"quote_err_{code}", lang, **error.params, suggestions=", ".join(error.suggestions)
                             or "—", detail=str(error))
        assert len(rendered) < 600


def test_a_caller_with_the_price_list_refuses_too_many_gpus_in_the_parser() -> None:
    with pytest.raises(QuoteInputError) as info:
        parse_quote_text("h100 x100 1 week", CATALOG, max_gpus=PRICES.max_gpus_per_quote)
    assert info.value.code == "bad_count" and info.value.params["max"] == PRICES.max_gpus_per_quote
    assert parse_quote_text("h100 x64 1 week", CATALOG, max_gpus=64).request.gpu_count == 64


@pytest.mark.parametrize(("text", "hours"), [
    ("h100 x2 на год", 365 * 24), ("h100 x2 for a year", 365 * 24), ("h100 x2 на полгода", 180 * 24),
    ("h100 x2 на пару дней", 48), ("h100 x2 for a couple of days", 48), ("h100 x8 2 недели 你好", 336),
    ("🚀 h100 x2 🔥 2 weeks", 336), ("two h100s for 3 days", 72), ("a pair of h100 for 3 days", 72),
    ("dual 4090 for a couple of days", 48), ("на 4-х картах a100 на 3 дня", 72),
])
def test_years_couples_and_noise_are_read(text: str, hours: int) -> None:
    request = parse_quote_text(text, CATALOG).request
    assert request.duration.hours == hours and request.gpu_count == 2 if "pair" in text or "dual" in text \
        else request.duration.hours == hours


@pytest.mark.parametrize(("text", "hours"), [("2 years", 730 * 24), ("полгода", 180 * 24), ("пару дней", 48),
                                             ("a couple of days", 48), ("1 год", 365 * 24)])
def test_durations_in_years(text: str, hours: int) -> None:
    assert parse_duration(text).hours == Decimal(hours)


@pytest.mark.parametrize("text", ["-3 days", "0 hours", "1 month -3 days", "−2 weeks"])
def test_negative_or_zero_durations_are_refused(text: str) -> None:
    with pytest.raises(DurationError, match="longer than zero"):
        parse_duration(text)


# ---- /fit ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "key", "params"), [
    ("llama-3.1-8b на 10000 h100", "fit_err_out_of_range", {"value": "10,000"}),
    ("llama-3.1-8b 10,000 h100", "fit_err_out_of_range", {"value": "10,000"}),
    ("llama-3.1-8b h100 x10000", "fit_err_out_of_range", {"value": "10,000"}),
    ("llama-3.1-8b h100 x" + "9" * 400, "fit_err_out_of_range", {"high": "64"}),
    ("llama-3.1-8b 0 h100", "fit_err_out_of_range", {"value": "0"}),
    ("llama-3.1-8b h100 x0", "fit_err_out_of_range", {"value": "0"}),
    ("llama-3.1-8b gpus=0", "fit_err_out_of_range", {"value": "0"}),
    ("llama-3.1-8b -3 h100", "fit_err_out_of_range", {"value": "-3"}),
    ("llama-3.1-8b h100 x-3", "fit_err_out_of_range", {"value": "-3"}),
    ("llama-3.1-8b h100 на 0 часов", "fit_err_bad_duration", {}),
    ("llama-3.1-8b h100 for -3 days", "fit_err_bad_duration", {}),
    ("a" * 4000, "fit_err_too_long", {"length": 4000}),
    (LONG, "fit_err_too_long", {"length": len(LONG.strip())}),
    (EMOJI, "fit_err_usage", {}),
    (CHINESE, "fit_err_usage", {}),
    (ARABIC, "fit_err_usage", {}),
    (f"{ARABIC} H100", "fit_err_which_model", {}),
])
def test_bad_fit_requests_get_one_clear_error(text: str, key: str, params: dict[str, object]) -> None:
    with pytest.raises(FitInputError) as info:
        PARSER.parse(text)
    assert info.value.phrase.key == key
    assert params.items() <= info.value.phrase.params.items()
    for lang in ("ru", "en"):
        assert info.value.phrase.render(lang)  # every placeholder has its parameter


@pytest.mark.parametrize("text", ["llama-3.1-8b h100 for 500 years", "llama-3.1-8b on h100 for 2 weeks",
                                  "能在H100上运行llama-3.1-8b吗", "llama-3.1-8b 在 H100 上 😀"])
def test_fit_sets_durations_and_noise_aside(text: str) -> None:
    parsed = PARSER.parse(text)
    assert parsed.request.model.id == "llama-3.1-8b" and parsed.request.gpu is not None
    assert parsed.request.gpu.id == "h100-sxm" and parsed.notes(PARSER) == []


# ---- nothing else is ever raised -----------------------------------------------------------------------
NASTY_WORDS = ["дней", "years", "лет", "часов", "weeks", "h100", "4090", "llama-3.1-8b", "two", "пару", "0",
               "-3", "10,000", "x0", "x", "q5_k_xl", "h300", "for", "на", EMOJI, CHINESE, ARABIC, "9" * 30]
NASTY = st.lists(st.one_of(st.sampled_from(NASTY_WORDS), st.text(alphabet="0123456789-−,.x×*h😀能", max_size=6)),
                 max_size=10).map(" ".join)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(NASTY)
def test_nasty_input_ends_in_a_request_or_the_parsers_own_error(text: str) -> None:
    try:
        parsed = PARSER.parse(text)
    except FitInputError as exc:
        assert exc.phrase.render("ru") and exc.phrase.render("en")
    else:
        assert isinstance(parsed, ParsedRequest) and 1 <= parsed.request.gpu_count <= 64
        assert all(note.render("ru") for note in parsed.notes(PARSER))
    try:
        request = parse_quote_text(text, CATALOG).request
        compute_quote(request, CATALOG.get(request.gpu_id).name, PRICES, NOW)
    except QuoteInputError as exc:
        assert exc.code and render_input_error(exc, "ru")
    else:
        assert 1 <= request.gpu_count <= PRICES.max_gpus_per_quote and request.duration.hours > 0
