"""The placement state machine and its billing, as pure functions of (placement, action, now)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from gpu.placements import engine
from gpu.placements.engine import EXPIRED, RUNNING, STOPPED, Placement, PlacementStateError, started_hours
from gpu.prices import TERM_HOURS, Term
from gpu.quote.engine import Quote, compute_quote
from gpu.quote.request import Pricing, QuoteRequest, parse_quote_text
from tests.conftest import gpu_data

T0 = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
DATA = gpu_data()


def quote(text: str, when: dt.datetime = T0) -> Quote:
    request = parse_quote_text(text, DATA.gpus).request
    return compute_quote(request, DATA.gpus.get(request.gpu_id).name, DATA.prices.current(), when)


def rent(text: str, when: dt.datetime = T0) -> Placement:
    return engine.from_quote(quote(text, when), placement_id="P-AAAAAAAAAAAAAAAA", owner="u", quote_id=None,
                             now=when)


@pytest.mark.parametrize(("text", "days"), [("h100 x8 1 day committed", 1), ("h100 x8 1 week committed", 7),
                                            ("h100 x8 1 month committed", 30), ("a100 x2 2 weeks committed", 14)])
def test_a_committed_term_is_paid_up_front_for_exactly_its_days(text: str, days: int) -> None:
    placement = rent(text)
    assert placement.status(T0) == RUNNING
    assert placement.paid_until == T0 + dt.timedelta(days=days)
    assert placement.prepaid == quote(text).total and placement.total(T0 + dt.timedelta(hours=1)) == placement.prepaid
    assert TERM_HOURS[Term.WEEK] == 7 * 24 and TERM_HOURS[Term.MONTH] == 30 * 24


def test_stop_never_moves_paid_until_nor_refunds_and_start_again_is_allowed_until_then() -> None:
    placement = rent("h100 x8 1 week committed")
    paid_until, prepaid = placement.paid_until, placement.prepaid
    stopped = engine.stop(placement, T0 + dt.timedelta(hours=3))
    assert stopped is not None and stopped.status(T0 + dt.timedelta(hours=3)) == STOPPED
    assert (stopped.paid_until, stopped.prepaid) == (paid_until, prepaid)
    assert engine.stop(stopped, T0 + dt.timedelta(hours=4)) is None  # nothing to stop
    again = engine.start(stopped, T0 + dt.timedelta(days=6, hours=23))
    assert again is not None and again.status(again.updated_at) == RUNNING
    assert (again.paid_until, again.prepaid) == (paid_until, prepaid)
    assert engine.start(again, again.updated_at) is None  # already running


def test_past_paid_until_it_reads_as_expired_and_cannot_be_started() -> None:
    placement = rent("h100 x8 1 week committed")
    assert placement.paid_until is not None
    stopped = engine.stop(placement, T0 + dt.timedelta(days=1))
    assert stopped is not None
    assert stopped.status(placement.paid_until - dt.timedelta(microseconds=1)) == STOPPED
    assert stopped.status(placement.paid_until) == EXPIRED and placement.status(placement.paid_until) == EXPIRED
    with pytest.raises(PlacementStateError) as refused:
        engine.start(stopped, placement.paid_until + dt.timedelta(minutes=1))
    assert refused.value.code == "paid_period_over"
    assert engine.stop(placement, placement.paid_until) is None  # an expired placement has nothing to stop


def test_extend_adds_whole_terms_from_paid_until_not_from_now() -> None:
    placement = rent("h100 x8 1 week committed")
    assert placement.paid_until is not None
    later = T0 + dt.timedelta(days=3)
    extension = compute_quote(QuoteRequest(placement.gpu_id, 8, parse_quote_text("h100 2 weeks", DATA.gpus)
                                           .request.duration, Pricing.COMMITTED),
                              placement.gpu_name, DATA.prices.current(), later)
    extended = engine.extend(placement, extension, later)
    assert extended.paid_until == placement.paid_until + dt.timedelta(days=14) == T0 + dt.timedelta(days=21)
    assert extended.prepaid == placement.prepaid + extension.total
    assert extended.version == placement.version + 1


def test_hourly_placements_cannot_be_extended_and_never_expire() -> None:
    placement = rent("h100 x8 2 weeks")
    assert placement.paid_until is None
    assert placement.status(T0 + dt.timedelta(days=400)) == RUNNING
    with pytest.raises(PlacementStateError) as refused:
        engine.extend(placement, quote("h100 x8 1 week committed"), T0)
    assert refused.value.code == "not_committed"


def test_expired_committed_placements_cannot_be_extended() -> None:
    placement = rent("h100 x8 1 day committed")
    with pytest.raises(PlacementStateError) as refused:
        engine.extend(placement, quote("h100 x8 1 day committed"), T0 + dt.timedelta(days=2))
    assert refused.value.code == "expired"


@pytest.mark.parametrize(("seconds", "hours"), [(0, 1), (1, 1), (3600, 1), (3601, 2), (7200, 2), (7201, 3)])
def test_every_started_hour_is_billed_at_least_one(seconds: int, hours: int) -> None:
    assert started_hours(T0, T0 + dt.timedelta(seconds=seconds)) == hours


def test_on_demand_accrues_per_started_hour_while_running_and_stops_accruing_when_stopped() -> None:
    placement = rent("h100 x8 2 weeks")
    rate = placement.hourly_rate
    assert rate == DATA.prices.current().gpus["h100-sxm"].on_demand
    assert placement.total(T0) == 8 * rate  # the first started hour
    assert placement.accrued_hours(T0 + dt.timedelta(minutes=90)) == 2
    stopped = engine.stop(placement, T0 + dt.timedelta(minutes=90))
    assert stopped is not None and stopped.billed_hours == 2
    far = T0 + dt.timedelta(days=5)
    assert stopped.accrued_hours(far) == 2 and stopped.total(far) == (8 * 2 * rate).quantize(Decimal("0.01"))
    resumed = engine.start(stopped, far)
    assert resumed is not None
    assert resumed.accrued_hours(far + dt.timedelta(minutes=10)) == 3  # a new stretch starts a new hour
    assert resumed.total(far + dt.timedelta(hours=2, seconds=1)) == (8 * 5 * rate).quantize(Decimal("0.01"))


def test_spot_accrues_at_the_spot_rate() -> None:
    placement = rent("a100 x4 45 days spot")
    assert placement.hourly_rate == DATA.prices.current().gpus[placement.gpu_id].spot
    assert placement.paid_until is None


def test_payload_round_trip_keeps_every_field() -> None:
    placement = rent("h100 x8 1 week committed")
    assert engine.placement_from_payload(engine.placement_to_payload(placement)) == placement
    contract = engine.placement_contract(placement, T0)
    assert list(contract)[:6] == ["placement_id", "status", "started_at", "paid_until", "quote_id", "total"]
    assert contract["started_at"] == "2026-12-01T12:00:00Z" and contract["paid_until"] == "2026-12-08T12:00:00Z"
