"""The pure quote engine and the request parser: exact money, rules, and the properties of the issue."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu.catalog import load_gpu_catalog
from gpu.prices import PriceListError, Term, load_price_list, parse_price_list
from gpu.quote.duration import Duration, Unit
from gpu.quote.engine import cli_contract, compute_quote, quote_from_payload, quote_to_payload
from gpu.quote.request import Pricing, QuoteInputError, QuoteRequest, parse_quote_text
from tests.conftest import DATA_DIR

CATALOG = load_gpu_catalog(DATA_DIR)
PRICES = load_price_list(DATA_DIR, known_gpu_ids=set(CATALOG.ids()))
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
PRICED = sorted(PRICES.gpus)


def quote(text: str) -> Any:
    request = parse_quote_text(text, CATALOG).request
    return compute_quote(request, CATALOG.get(request.gpu_id).name, PRICES, NOW)


def request(gpu: str, count: int, hours: int, pricing: Pricing) -> QuoteRequest:
    return QuoteRequest(gpu, count, Duration(((Decimal(hours), Unit.HOUR),)), pricing)


def price(req: QuoteRequest) -> Any:
    return compute_quote(req, CATALOG.get(req.gpu_id).name, PRICES, NOW)


# ---- parsing -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "gpu", "count", "hours", "pricing"), [
    ("h100 x8 2 weeks", "h100-sxm", 8, 336, "on-demand"),
    ("8x H100 1 month 2 weeks committed", "h100-sxm", 8, 1056, "committed"),
    ("4 gpus a100 45 days spot", "a100-80gb", 4, 1080, "spot"),
    ("2×L40S на 3 часа", "l40s", 2, 3, "on-demand"),
    ("h200 x4 1 месяц резерв", "h200", 4, 720, "committed"),
    ("rtx 4090 x2 10 дней спот", "rtx-4090", 2, 240, "spot"),
    ("a100 40gb x2 2 недели", "a100-40gb", 2, 336, "on-demand"),
    ("h100x8 3d", "h100-sxm", 8, 72, "on-demand"),
    ("8 h100 2 weeks", "h100-sxm", 8, 336, "on-demand"),
    ("H100-PCIe 1 week pricing=committed", "h100-pcie", 1, 168, "committed"),
    ("Н100 х8 2 недели по требованию", "h100-sxm", 8, 336, "on-demand"),  # Cyrillic look-alikes
])
def test_parses_requests(text: str, gpu: str, count: int, hours: int, pricing: str) -> None:
    parsed = parse_quote_text(text, CATALOG).request
    assert (parsed.gpu_id, parsed.gpu_count, parsed.duration.hours, parsed.pricing.value) == (
        gpu, count, hours, pricing)


def test_key_is_taken_out_case_sensitively() -> None:
    parsed = parse_quote_text("h100 x8 2 weeks key=Order-17A", CATALOG)
    assert parsed.key == "Order-17A" and parsed.request.gpu_count == 8


def test_two_spellings_of_one_purchase_share_a_fingerprint() -> None:
    first = parse_quote_text("h100 x8 2 weeks", CATALOG).request
    second = parse_quote_text("8x h100-sxm 14 days on-demand", CATALOG).request
    other = parse_quote_text("h100 x4 2 weeks", CATALOG).request
    assert first.fingerprint() == second.fingerprint() != other.fingerprint()


@pytest.mark.parametrize(("text", "code", "suggests"), [
    ("h1000 x8 2 weeks", "unknown_gpu", "h100-sxm"),
    ("h100 x8", "no_duration", "2 weeks"),
    ("x8 2 weeks", "no_gpu", "h100-sxm"),
    ("mi300x 2 weeks spot", "spot_unavailable", "on-demand"),
    ("h100 x500 2 weeks", "bad_count", ""),
    ("h100 x0 2 weeks", "bad_count", ""),
    ("h100 400 days", "too_long", ""),
    ("h100 2 weeks pricing=cheap", "bad_pricing", "spot"),
    ("h100 x8 forever", "unknown_words", "2 weeks"),
    ("a100 40gb x2 garbage", "unknown_words", "1 month"),
])
def test_bad_input_is_explained(text: str, code: str, suggests: str) -> None:
    with pytest.raises(QuoteInputError) as info:
        quote(text)
    assert info.value.code == code
    assert str(info.value)
    if suggests:
        assert suggests in info.value.suggestions


# ---- money ---------------------------------------------------------------------------------------------
def test_h100_x8_two_weeks_on_demand_is_exact() -> None:
    q = quote("h100 x8 2 weeks")
    assert q.billable_hours == 336
    assert [(line.quantity, line.unit_price, line.amount) for line in q.lines] == [
        (Decimal(2688), Decimal("2.99"), Decimal("8037.12"))]
    assert q.total == Decimal("8037.12") and q.effective_hourly_rate == Decimal("2.9900")
    assert q.valid_until - q.issued_at == dt.timedelta(days=PRICES.quote_valid_days)
    assert "week_month" in q.rules and "example_prices" in q.rules


def test_committed_month_and_weeks_are_paid_in_full_terms() -> None:
    q = quote("h100 x8 1 month 2 weeks committed")
    month = Decimal(720) * Decimal("2.99") * Decimal("0.75")
    week = (Decimal(168) * Decimal("2.99") * Decimal("0.88")).quantize(Decimal("0.01"))
    assert [(line.term, line.quantity, line.unit_price) for line in q.lines] == [
        ("month", Decimal(8), month), ("week", Decimal(16), week)]
    assert q.total == 8 * month + 16 * week
    assert "term_paid_in_full" in q.rules and q.billable_hours == 1056


def test_a_longer_term_is_chosen_when_it_is_cheaper() -> None:
    q = quote("mi300x 27 days committed")
    assert [line.term for line in q.lines] == ["month"] and q.billable_hours == 720
    assert "term_covers_more" in q.rules


def test_spot_states_it_can_be_interrupted() -> None:
    q = quote("a100 x4 45 days spot")
    assert q.unit_price == Decimal("1.09") and "spot_interruptible" in q.rules


def test_each_line_rounds_half_up_to_cents() -> None:
    prices = parse_price_list({"version": "t", "currency": "USD", "effective_date": "2026-01-01",
                               "gpus": {"l4": {"on_demand": "0.125", "spot": "0.105"}}})
    req = QuoteRequest("l4", 1, Duration(((Decimal(1), Unit.HOUR),)), Pricing.ON_DEMAND)
    assert compute_quote(req, "L4", prices, NOW).total == Decimal("0.13")  # 0.125 -> 0.13, not 0.12
    spot = QuoteRequest("l4", 3, Duration(((Decimal(1), Unit.HOUR),)), Pricing.SPOT)
    assert compute_quote(spot, "L4", prices, NOW).total == Decimal("0.32")  # 0.315 -> 0.32


def test_price_list_is_validated() -> None:
    with pytest.raises(PriceListError, match="spot"):
        parse_price_list({"version": "t", "currency": "USD", "effective_date": "2026-01-01",
                          "gpus": {"l4": {"on_demand": "1", "spot": "2"}}})
    with pytest.raises(PriceListError, match="discount"):
        parse_price_list({"version": "t", "currency": "USD", "effective_date": "2026-01-01",
                          "term_discount_percent": {"month": "100"}, "gpus": {"l4": {"on_demand": "1"}}})
    assert PRICES.example and PRICES.currency == "USD" and set(PRICES.gpus) <= set(CATALOG.ids())
    assert {Term.DAY.hours, Term.WEEK.hours, Term.MONTH.hours} == {24, 168, 720}


def test_payload_round_trip_and_cli_contract() -> None:
    q = quote("h100 x8 1 month 2 weeks committed")
    assert quote_from_payload(quote_to_payload(q)) == q
    contract = cli_contract(q, "Q-1", replayed=False)
    for key in ("quote_id", "gpu", "gpu_count", "pricing", "billable_hours", "currency", "unit_price",
                "lines", "total", "replayed", "price_list_version"):
        assert key in contract
    assert isinstance(contract["gpu_count"], int) and isinstance(contract["total"], str)
    assert sum(Decimal(line["amount"]) for line in contract["lines"]) == Decimal(contract["total"])
    for line in contract["lines"]:
        assert Decimal(line["quantity"]) * Decimal(line["unit_price"]) == Decimal(line["amount"])


# ---- properties ----------------------------------------------------------------------------------------
gpus = st.sampled_from(PRICED)
pricings = st.sampled_from(list(Pricing))
counts = st.integers(1, PRICES.max_gpus_per_quote)
hours = st.integers(1, PRICES.max_duration_days * 24)


def _priceable(gpu: str, pricing: Pricing) -> bool:
    return pricing is not Pricing.SPOT or PRICES.gpus[gpu].spot is not None


@settings(max_examples=300, deadline=None)
@given(gpu=gpus, count=counts, h=hours, pricing=pricings)
def test_total_is_the_sum_of_the_lines(gpu: str, count: int, h: int, pricing: Pricing) -> None:
    if not _priceable(gpu, pricing):
        return
    q = price(request(gpu, count, h, pricing))
    assert q.total == sum(line.amount for line in q.lines)
    assert all(line.amount == line.amount.quantize(Decimal("0.01")) for line in q.lines)
    assert q.billable_hours >= h and sum(line.hours for line in q.lines) == q.billable_hours


@settings(max_examples=200, deadline=None)
@given(gpu=gpus, n=st.integers(1, 12), count=counts, pricing=pricings)
def test_week_is_7_and_month_30_day_hours(gpu: str, n: int, count: int, pricing: Pricing) -> None:
    if not _priceable(gpu, pricing):
        return
    day = Duration(((Decimal(n), Unit.DAY),))
    week = Duration(((Decimal(n), Unit.WEEK),))
    month = Duration(((Decimal(n), Unit.MONTH),))
    assert week.billable_hours == 7 * day.billable_hours and month.billable_hours == 30 * day.billable_hours
    q_week = price(QuoteRequest(gpu, count, week, pricing))
    q_days = price(QuoteRequest(gpu, count, Duration(((Decimal(7 * n), Unit.DAY),)), pricing))
    assert q_week.total == q_days.total and q_week.billable_hours == q_days.billable_hours
    assert q_week.requested_hours == 7 * 24 * n
    if pricing is not Pricing.COMMITTED:  # a committed quote may pick a longer, cheaper term
        assert q_week.billable_hours == 7 * 24 * n


@settings(max_examples=300, deadline=None)
@given(gpu=gpus, count=counts, h=hours, more_h=st.integers(0, 2000), more_n=st.integers(0, 16),
       pricing=pricings)
def test_cost_is_monotonic_in_count_and_duration(gpu: str, count: int, h: int, more_h: int, more_n: int,
                                                 pricing: Pricing) -> None:
    if not _priceable(gpu, pricing):
        return
    base = price(request(gpu, count, h, pricing)).total
    longer = min(h + more_h, PRICES.max_duration_days * 24)
    bigger = min(count + more_n, PRICES.max_gpus_per_quote)
    assert price(request(gpu, count, longer, pricing)).total >= base
    assert price(request(gpu, bigger, h, pricing)).total >= base


@settings(max_examples=200, deadline=None)
@given(gpu=gpus, count=counts, h=hours)
def test_committed_never_costs_more_than_on_demand(gpu: str, count: int, h: int) -> None:
    committed = price(request(gpu, count, h, Pricing.COMMITTED)).total
    assert committed <= price(request(gpu, count, h, Pricing.ON_DEMAND)).total
