"""A quote lists the cheaper ways to pay for the same hours (committed terms and their mix, spot marked as
interruptible), the cheapest uninterruptible one marked with what it saves; a quote whose own way costs least
says nothing more. Expected totals are worked out from the example price list (H100 SXM 2.99 on demand, 1.89
spot; terms −5 % a day, −12 % a week, −25 % a month of 24 h, 7 and 30 days; MI300X has no spot and −30 % a
month)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from app.views.quote import render_quote
from gpu.quote.engine import Quote, cli_contract, compute_quote, quote_from_payload, quote_to_payload
from gpu.quote.request import parse_quote_text
from tests.conftest import gpu_data

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
DATA = gpu_data()


def quote(text: str) -> Quote:
    request = parse_quote_text(text, DATA.gpus).request
    return compute_quote(request, DATA.gpus.get(request.gpu_id).name, DATA.prices.current(), T0)


def test_a_month_on_demand_is_compared_with_the_30_day_term() -> None:
    month = quote("8 h100 на месяц")
    assert month.pricing == "on-demand" and month.total == Decimal("17222.40")  # the quote itself is unchanged
    [on_demand, _spot, committed] = month.options
    assert (on_demand.pricing, on_demand.billable_hours, on_demand.total, on_demand.cheapest) == (
        "on-demand", 720, Decimal("17222.40"), False)
    assert (committed.pricing, committed.billable_hours, committed.total, committed.cheapest) == (
        "committed", 720, Decimal("12916.80"), True)
    assert committed.total == quote("8 h100 на месяц committed").total
    text_ru = render_quote(month, "ru")
    nbsp = "\u00a0"  # Russian groups thousands with a no-break space
    assert f"17{nbsp}222,40 USD" in text_ru
    # spot costs less still, so the mark says what the term is the cheapest of
    assert f"12{nbsp}916,80 USD ← дешевле всего без прерываний, экономия 4{nbsp}305,60 USD" in text_ru
    assert "12,916.80 USD ← cheapest without interruptions, saves 4,305.60 USD" in render_quote(month, "en")


def options(text: str) -> list[tuple[str, int, Decimal, bool]]:
    return [(o.pricing, o.billable_hours, o.total, o.cheapest) for o in quote(text).options]


def test_days_are_compared_with_day_terms() -> None:
    # 2 × 72 h × 2.99 = 430.56; three day terms: 2 × 3 × 68.17 (2.99 × 24 × 0.95 = 68.172) = 409.02
    assert options("h100 x2 3 days") == [
        ("on-demand", 72, Decimal("430.56"), False),
        ("spot", 72, Decimal("272.16"), False),  # 2 × 72 × 1.89: cheaper still, but it may be interrupted
        ("committed", 72, Decimal("409.02"), True)]
    text = render_quote(quote("h100 x2 3 days"), "en")
    assert "committed term, 72 h: 409.02 USD ← cheapest without interruptions, saves 21.54 USD" in text
    assert "spot (interruptible), 72 h: 272.16 USD ← saves 158.40 USD if spot is not interrupted" in text
    assert "add “committed” to the request" in text and "add “spot” to the request" in text
    # 23 hours cost more on demand (68.77) than the day term that covers 24 of them (68.17)
    assert ("committed", 24, Decimal("68.17"), True) in options("h100 x1 23 hours")


def test_weeks_months_and_mixed_durations_are_compared_with_the_cheapest_mix_of_terms() -> None:
    # a week term: 2.99 × 168 × 0.88 = 442.04 (442.0416); ten days = a week and three days
    assert ("committed", 240, Decimal("1293.10"), True) in options("h100 x2 10 days")  # 2 × (442.04 + 3 × 68.17)
    # a month term: 2.99 × 720 × 0.75 = 1614.60; 45 days = a month, two weeks and a day
    assert ("committed", 1080, Decimal("2566.85"), True) in options("h100 x1 45 days")  # 1614.60 + 884.08 + 68.17
    assert ("committed", 720, Decimal("12916.80"), True) in options("8 h100 на месяц")


def test_a_gpu_without_spot_lists_only_the_terms() -> None:
    # MI300X: 2 × 72 × 2.49 = 358.56 on demand; 2 × 3 × 56.77 (2.49 × 24 × 0.95 = 56.772) = 340.62
    assert options("mi300x x2 3 days") == [("on-demand", 72, Decimal("358.56"), False),
                                            ("committed", 72, Decimal("340.62"), True)]


def test_a_quote_whose_own_way_costs_least_says_nothing_more() -> None:
    assert options("mi300x x1 20 hours") == []  # 49.80 on demand; a day term is 56.77
    assert options("h100 x2 1 week spot") == []
    assert "←" not in render_quote(quote("mi300x x1 20 hours"), "en")
    # a short on-demand rental: only spot costs less; the cheapest way that runs to the end is its own
    assert options("h100 x1 5 hours") == [("on-demand", 5, Decimal("14.95"), True),
                                          ("spot", 5, Decimal("9.45"), False)]
    # a committed request whose only cheaper way is spot keeps its mark
    assert options("h100 x8 1 month committed")[0] == ("committed", 720, Decimal("12916.80"), True)
    assert [o[0] for o in options("h100 x8 1 month committed")] == ["committed", "spot"]


def test_options_survive_storage_and_are_added_after_the_contract_keys() -> None:
    month = quote("8 h100 на месяц")
    assert quote_from_payload(quote_to_payload(month)) == month
    contract = cli_contract(month, "Q-AAAAAAAAAAAAAAAA", False)
    assert list(contract)[-1] == "options" and list(contract)[:11] == [
        "quote_id", "gpu", "gpu_count", "pricing", "billable_hours", "currency", "unit_price", "lines", "total",
        "replayed", "price_list_version"]
    assert contract["options"][2] == {"pricing": "committed", "billable_hours": "720", "total": "12916.80",
                                      "cheapest": True}
    legacy = quote_to_payload(month)
    del legacy["options"]  # a quote stored before the comparison existed
    assert quote_from_payload(legacy).options == ()


def test_with_no_cheaper_spot_the_cheapest_way_is_marked_plainly() -> None:
    """The A10 has no spot price: the term is the cheapest of all, said without a qualifier."""
    text = render_quote(quote("a10 x2 1 week"), "en")
    assert "← cheapest, saves" in text and "without interruptions" not in text
