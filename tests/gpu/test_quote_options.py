"""A quote of a week or longer shows on-demand and the committed term side by side, the cheapest marked."""

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
    [on_demand, committed] = month.options
    assert (on_demand.pricing, on_demand.billable_hours, on_demand.total, on_demand.cheapest) == (
        "on-demand", 720, Decimal("17222.40"), False)
    assert (committed.pricing, committed.billable_hours, committed.total, committed.cheapest) == (
        "committed", 720, Decimal("12916.80"), True)
    assert committed.total == quote("8 h100 на месяц committed").total
    text_ru = render_quote(month, "ru")
    nbsp = "\u00a0"  # Russian groups thousands with a no-break space
    assert f"17{nbsp}222,40 USD" in text_ru
    assert f"12{nbsp}916,80 USD ← дешевле всего, экономия 4{nbsp}305,60 USD" in text_ru
    assert "12,916.80 USD ← cheapest, saves 4,305.60 USD" in render_quote(month, "en")


def test_shorter_requests_and_committed_requests_keep_a_single_price() -> None:
    assert quote("h100 x8 6 days").options == ()
    assert quote("h100 x8 1 month committed").options == ()
    assert "←" not in render_quote(quote("h100 x8 1 month committed"), "en")
    assert len(quote("a100 x4 2 weeks spot").options) == 2


def test_options_survive_storage_and_are_added_after_the_contract_keys() -> None:
    month = quote("8 h100 на месяц")
    assert quote_from_payload(quote_to_payload(month)) == month
    contract = cli_contract(month, "Q-AAAAAAAAAAAAAAAA", False)
    assert list(contract)[-1] == "options" and list(contract)[:11] == [
        "quote_id", "gpu", "gpu_count", "pricing", "billable_hours", "currency", "unit_price", "lines", "total",
        "replayed", "price_list_version"]
    assert contract["options"][1] == {"pricing": "committed", "billable_hours": "720", "total": "12916.80",
                                      "cheapest": True}
    legacy = quote_to_payload(month)
    del legacy["options"]  # a quote stored before the comparison existed
    assert quote_from_payload(legacy).options == ()
