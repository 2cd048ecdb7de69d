"""Simulated placements: the state machine and its billing, pure functions of (placement, action, now).

No real GPUs are started; a placement is a record of what a customer would be running and paying.

States: ``running`` -> ``stopped`` <-> ``running``; a committed placement reads as ``expired`` once the
clock passes ``paid_until`` (nothing has to happen at that moment: the status is computed from the clock).

* committed: the quoted terms are paid up front; ``paid_until`` = start + the quoted hours (a day is 24 h,
  a week exactly 7 days, a month exactly 30 days). Stopping never moves ``paid_until`` and refunds nothing
  (the glossary rule: stopping a simulated placement does not pause the paid period); starting again is
  allowed until ``paid_until``. ``extend`` adds whole terms from ``paid_until`` (not from now), priced by
  the price list current at that moment.
* on-demand / spot: nothing is prepaid; every running stretch is billed per started hour (at least one),
  at the quoted hourly rate; stopped time costs nothing. There is no ``paid_until`` and no expiry.

Money is ``Decimal``; amounts are rounded ROUND_HALF_UP to the currency's minor units, like quotes.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from gpu.quote.engine import Quote

RUNNING = "running"
STOPPED = "stopped"
EXPIRED = "expired"
COMMITTED = "committed"

PLACEMENT_ID = re.compile(r"^P-[A-Z2-7]{16}$")
QUOTE_ID = re.compile(r"^Q-[A-Z2-7]{16}$")
HOUR_S = 3600


class PlacementStateError(Exception):
    """The action is not allowed in the placement's current state (``code`` says why); nothing changed."""

    def __init__(self, message: str, code: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class Placement:
    id: str
    owner: str
    state: str                     # stored state: running or stopped (expired is computed, see status())
    gpu_id: str
    gpu_name: str
    gpu_count: int
    pricing: str                   # committed, on-demand or spot
    currency: str
    minor_units: int
    hourly_rate: Decimal           # per GPU-hour: the accrual rate (on-demand/spot), informative (committed)
    prepaid: Decimal               # committed: everything paid so far (quote + extensions); else 0
    billed_hours: int              # on-demand/spot: started hours of the finished running stretches
    started_at: dt.datetime
    running_since: dt.datetime | None
    paid_until: dt.datetime | None
    quote_id: str | None
    price_list_version: str
    version: int                   # optimistic concurrency: every state change increments it
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def committed(self) -> bool:
        return self.pricing == COMMITTED

    def status(self, now: dt.datetime) -> str:
        if self.paid_until is not None and now >= self.paid_until:
            return EXPIRED
        return self.state

    def accrued_hours(self, now: dt.datetime) -> int:
        """On-demand/spot: GPU-hours per GPU billed so far, the running stretch included."""
        if self.running_since is None:
            return self.billed_hours
        return self.billed_hours + started_hours(self.running_since, now)

    def total(self, now: dt.datetime) -> Decimal:
        """What the placement has cost so far (committed: everything prepaid; else the accrual)."""
        if self.committed:
            return self.prepaid
        return money(self.gpu_count * self.accrued_hours(now) * self.hourly_rate, self.minor_units)


def money(value: Decimal, minor_units: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-minor_units), rounding=ROUND_HALF_UP)


def started_hours(since: dt.datetime, until: dt.datetime) -> int:
    """Every started hour counts, at least one: 0 s -> 1, 3600 s -> 1, 3601 s -> 2."""
    micros = max(0, (until - since) // dt.timedelta(microseconds=1))  # exact integers, no float seconds
    return max(1, -(-micros // (HOUR_S * 1_000_000)))


def from_quote(quote: Quote, *, placement_id: str, owner: str, quote_id: str | None,
               now: dt.datetime) -> Placement:
    """A new running placement for ``quote`` (committed: its whole term paid now)."""
    committed = quote.pricing == COMMITTED
    rate = next((line.unit_price for line in quote.lines if line.kind != "term"), None)
    if committed or rate is None:
        rate = quote.effective_hourly_rate
    return Placement(
        id=placement_id, owner=owner, state=RUNNING, gpu_id=quote.gpu_id, gpu_name=quote.gpu_name,
        gpu_count=quote.gpu_count, pricing=quote.pricing, currency=quote.currency,
        minor_units=quote.minor_units, hourly_rate=rate,
        prepaid=quote.total if committed else Decimal(0), billed_hours=0, started_at=now, running_since=now,
        # a committed quote bills whole terms (plus on-demand hours for a remainder): all paid up front
        paid_until=now + dt.timedelta(hours=quote.billable_hours) if committed else None,
        quote_id=quote_id, price_list_version=quote.price_list_version, version=1, created_at=now,
        updated_at=now)


def stop(placement: Placement, now: dt.datetime) -> Placement | None:
    """The stopped placement, or None when there is nothing to stop (already stopped or expired).

    ``paid_until`` and ``prepaid`` are never touched: stopping does not pause a paid period, and nothing
    is refunded. An hourly placement closes its running stretch (its started hours are billed).
    """
    if placement.status(now) != RUNNING:
        return None
    billed = placement.billed_hours
    if not placement.committed and placement.running_since is not None:
        billed += started_hours(placement.running_since, now)
    return replace(placement, state=STOPPED, running_since=None, billed_hours=billed,
                   version=placement.version + 1, updated_at=now)


def start(placement: Placement, now: dt.datetime) -> Placement | None:
    """The running placement, or None when it is already running; refused once the paid period is over."""
    status = placement.status(now)
    if status == EXPIRED:
        assert placement.paid_until is not None
        raise PlacementStateError(
            f"Placement {placement.id} cannot be started: its paid period ended at "
            f"{placement.paid_until.isoformat()}; rent a new one.", "paid_period_over",
            paid_until=placement.paid_until)
    if status == RUNNING:
        return None
    return replace(placement, state=RUNNING, running_since=now, version=placement.version + 1, updated_at=now)


def extend(placement: Placement, extension: Quote, now: dt.datetime) -> Placement:
    """Add the extension's terms to ``paid_until`` (from ``paid_until``, not from now); pay for them now."""
    if not placement.committed or placement.paid_until is None:
        raise PlacementStateError(
            f"Placement {placement.id} is {placement.pricing}: it is billed per started hour and has no paid "
            "period to extend.", "not_committed", pricing=placement.pricing)
    if placement.status(now) == EXPIRED:
        raise PlacementStateError(
            f"Placement {placement.id}'s paid period ended at {placement.paid_until.isoformat()}; an expired "
            "placement cannot be extended (rent a new one).", "expired", paid_until=placement.paid_until)
    if extension.pricing != COMMITTED or any(line.kind != "term" for line in extension.lines):
        raise ValueError("an extension is priced as whole committed terms")
    return replace(placement, paid_until=placement.paid_until + dt.timedelta(hours=extension.billable_hours),
                   prepaid=placement.prepaid + extension.total, version=placement.version + 1, updated_at=now)


# ---- serialisation: stored snapshots (replays) and the CLI contract -----------------------------------

def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _moment(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def placement_to_payload(placement: Placement) -> dict[str, Any]:
    return {
        "id": placement.id, "owner": placement.owner, "state": placement.state, "gpu_id": placement.gpu_id,
        "gpu_name": placement.gpu_name, "gpu_count": placement.gpu_count, "pricing": placement.pricing,
        "currency": placement.currency, "minor_units": placement.minor_units,
        "hourly_rate": format(placement.hourly_rate, "f"), "prepaid": format(placement.prepaid, "f"),
        "billed_hours": placement.billed_hours, "started_at": _iso(placement.started_at),
        "running_since": _iso(placement.running_since), "paid_until": _iso(placement.paid_until),
        "quote_id": placement.quote_id, "price_list_version": placement.price_list_version,
        "version": placement.version, "created_at": _iso(placement.created_at),
        "updated_at": _iso(placement.updated_at),
    }


def placement_from_payload(payload: dict[str, Any]) -> Placement:
    def when(name: str) -> dt.datetime:
        moment = _moment(payload[name])
        assert moment is not None
        return moment

    return Placement(
        id=payload["id"], owner=payload["owner"], state=payload["state"], gpu_id=payload["gpu_id"],
        gpu_name=payload["gpu_name"], gpu_count=int(payload["gpu_count"]), pricing=payload["pricing"],
        currency=payload["currency"], minor_units=int(payload["minor_units"]),
        hourly_rate=Decimal(payload["hourly_rate"]), prepaid=Decimal(payload["prepaid"]),
        billed_hours=int(payload["billed_hours"]), started_at=when("started_at"),
        running_since=_moment(payload["running_since"]), paid_until=_moment(payload["paid_until"]),
        quote_id=payload["quote_id"], price_list_version=payload["price_list_version"],
        version=int(payload["version"]), created_at=when("created_at"), updated_at=when("updated_at"))


def placement_contract(placement: Placement, now: dt.datetime, *, replayed: bool | None = None) -> dict[str, Any]:
    """The `anchorgpu rent/placements/stop/start/extend --json` object: contract keys first, then extras."""
    result: dict[str, Any] = {
        "placement_id": placement.id,
        "status": placement.status(now),
        "started_at": _iso(placement.started_at),
        "paid_until": _iso(placement.paid_until),
        "quote_id": placement.quote_id,
        "total": format(placement.total(now), "f"),
    }
    if replayed is not None:
        result["replayed"] = replayed
    result.update({
        "gpu": placement.gpu_id,
        "gpu_count": placement.gpu_count,
        # extras (informative)
        "gpu_name": placement.gpu_name,
        "pricing": placement.pricing,
        "currency": placement.currency,
        "hourly_rate": format(placement.hourly_rate, "f"),
        "billed_hours": None if placement.committed else placement.accrued_hours(now),
        "running_since": _iso(placement.running_since),
        "price_list_version": placement.price_list_version,
        "as_of": _iso(now),
    })
    return result
