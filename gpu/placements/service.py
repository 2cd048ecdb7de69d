"""PlacementService: the one entry point every front (bot, console chat, CLI) uses for placements.

Owners are strings like quotes' (``tg:<user>``, ``tg-chat:<chat>`` for a team, ``cli:<login>``,
``console:local``); an owner sees and controls only its own placements. ``actor`` (who pressed the button;
by default the owner) goes to the audit trail, so group admins can later act on a chat's placements.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.data import GpuData
from gpu.placements import engine
from gpu.placements.engine import PLACEMENT_ID, QUOTE_ID, Placement, PlacementStateError
from gpu.placements.store import (
    Change,
    KeyRecord,
    PlacementNotFoundError,
    PlacementStore,
    from_snapshot,
    new_placement_id,
    snapshot,
)
from gpu.quote.duration import Duration
from gpu.quote.engine import Quote, compute_quote
from gpu.quote.request import Pricing, QuoteInputError, QuoteRequest, parse_duration_or_error
from gpu.quote.service import QuoteService
from gpu.quote.store import IdempotencyConflictError, validate_key
from infra.clock import Clock, utc_now
from infra.idempotency import claim_or_replay

__all__ = ["PlacementConflictError", "PlacementInputError", "PlacementNotFoundError", "PlacementResult",
           "PlacementService", "PlacementStateError"]


Decide = Callable[[Placement, dt.datetime], Change]


class PlacementInputError(QuoteInputError):
    """Bad input (an id of the wrong shape, a duration that is not whole days…), phrased for the user."""


class PlacementConflictError(Exception):
    """The idempotency key was already used for another operation or other parameters; nothing written."""

    def __init__(self, key: str, operation: str, placement_id: str) -> None:
        super().__init__(
            f"Idempotency key '{key}' was already used for {operation} of placement {placement_id}. Reuse a key "
            "only to repeat exactly the same request; use a new key for a different one.")
        self.key = key
        self.operation = operation
        self.placement_id = placement_id


@dataclass(frozen=True)
class PlacementResult:
    placement: Placement
    as_of: dt.datetime        # the moment the result describes (a replay: when it was first returned)
    operation: str            # rent | stop | start | extend
    replayed: bool = False
    changed: bool = True      # False: stop of a stopped placement, start of a running one
    extension: dict[str, Any] | None = None  # extend: {"hours", "total", "lines"}


def _fingerprint(operation: str, params: dict[str, Any]) -> str:
    canonical = json.dumps({"op": operation, **params}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_placement_id(placement_id: str) -> str:
    text = placement_id.strip().upper()  # ids are base32: "p-abc…" typed by hand means the same
    if not PLACEMENT_ID.match(text):
        raise PlacementInputError(f"'{placement_id[:40]}' is not a placement id (they look like "
                                  "P-ABCDEFGHIJKLMNOP).", [], "placement_id", "bad_placement_id",
                                  value=placement_id[:40])
    return text


def check_quote_id(quote_id: str) -> str:
    text = quote_id.strip().upper()
    if not QUOTE_ID.match(text):
        raise PlacementInputError(f"'{quote_id[:40]}' is not a quote id (they look like Q-ABCDEFGHIJKLMNOP).",
                                  [], "quote_id", "bad_quote_id", value=quote_id[:40])
    return text


def _decide_at(decide: Decide, now: dt.datetime, current: Placement) -> Change:
    return decide(current, now)


class PlacementService:
    def __init__(self, engine_: AsyncEngine, data: GpuData, quotes: QuoteService, *, retention_hours: int = 24,
                 clock: Clock = utc_now) -> None:
        self.data = data
        self.quotes = quotes
        self.store = PlacementStore(engine_, retention_hours)
        self.clock = clock
        self._ready = False
        self._ready_lock = asyncio.Lock()  # only guards one-time schema creation, not idempotency

    async def setup(self) -> None:
        """Bring the schema to head (the quote service migrates it) and forget expired keys; once."""
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            await self.quotes.start()
            await self.store.purge_expired_keys(self.clock())
            self._ready = True

    # ---- renting -------------------------------------------------------------------------------------
    async def rent_text(self, text: str, *, owner: str, key: str | None = None,
                        actor: str | None = None) -> PlacementResult:
        """Rent what ``text`` asks for ("h100 x8 1 week committed"); the quote is stored and linked."""
        parsed = self.quotes.parse(text)
        if parsed.key is not None and key is not None and parsed.key != key:
            raise QuoteInputError("Two different idempotency keys were given; pass only one.", [], "key",
                                  "two_keys")
        key = parsed.key or key
        request = parsed.request
        params = {"request": request.normalized()}

        async def _refused(found: KeyRecord) -> tuple[Quote, str]:
            assert key is not None
            self._replay_or_refuse(key, "rent", _fingerprint("rent", params), found)  # raises: it differs
            raise PlacementConflictError(key, found.operation, found.placement_id)

        async def quote() -> tuple[Quote, str]:
            # under a rent key, the quote gets a key derived from it: concurrent retries share one quote
            quote_key = None if key is None else "rent:" + hashlib.sha256(key.encode()).hexdigest()[:40]
            try:
                issued = await self.quotes.issue(request, owner=owner, key=quote_key, request_text=text.strip())
            except IdempotencyConflictError as exc:
                if key is None:
                    raise
                # a concurrent rent under the same key asked for something else: its record decides
                found = await self.store.find_key(owner, key, self.clock())
                if found is not None:
                    return await _refused(found)
                raise PlacementConflictError(key, "rent", exc.original.quote_id) from None
            return issued.quote, issued.quote_id

        return await self._rent(owner=owner, actor=actor or owner, key=key, params=params, get_quote=quote)

    async def rent_quote(self, quote_id: str, *, owner: str, key: str | None = None,
                         actor: str | None = None, quote_owner: str | None = None) -> PlacementResult:
        """Rent a stored quote of this owner, at its prices (another owner's quote reads as not found).

        ``quote_owner`` (default: ``owner``): whose quote it must be — a Telegram group rents for the chat
        (``tg-chat:<chat>``) from a quote its admin asked for (``tg:<user>``)."""
        quote_id = check_quote_id(quote_id)
        expected_owner = quote_owner or owner

        async def quote() -> tuple[Quote, str]:
            issued = await self.quotes.get(quote_id)
            if issued is None or issued.owner != expected_owner:
                raise PlacementNotFoundError(quote_id)
            if self.clock() > issued.quote.valid_until:
                raise PlacementStateError(
                    f"Quote {quote_id} was valid until {issued.quote.valid_until.isoformat()}; ask for a new "
                    "quote.", "quote_expired", valid_until=issued.quote.valid_until)
            return issued.quote, quote_id

        return await self._rent(owner=owner, actor=actor or owner, key=key, params={"quote_id": quote_id},
                                get_quote=quote)

    async def _rent(self, *, owner: str, actor: str, key: str | None, params: dict[str, Any],
                    get_quote: Callable[[], Awaitable[tuple[Quote, str]]]) -> PlacementResult:
        await self.setup()
        if key is not None:
            validate_key(key)
        fingerprint = _fingerprint("rent", params)
        now = self.clock()
        if key is not None:
            found = await self.store.find_key(owner, key, now)
            if found is not None:
                return self._replay_or_refuse(key, "rent", fingerprint, found)
        quote, quote_id = await get_quote()
        now = self.clock()

        async def attempt() -> PlacementResult:
            placement = engine.from_quote(quote, placement_id=new_placement_id(), owner=owner, quote_id=quote_id,
                                          now=now)
            await self.store.insert(placement, actor=actor, key=key, operation="rent", fingerprint=fingerprint,
                                    response=snapshot(placement, now), details={"quote_id": quote_id,
                                                                                "total": str(quote.total)})
            return PlacementResult(placement, now, "rent")

        return await self._claim_or_replay(attempt, owner, key, "rent", fingerprint, lambda: now)

    async def _claim_or_replay(self, attempt: Callable[[], Awaitable[PlacementResult]], owner: str,
                               key: str | None, operation: str, fingerprint: str,
                               moment: Callable[[], dt.datetime]) -> PlacementResult:
        """``attempt``, and when another request holds the key: its record's replay or the conflict error
        (``moment``: the clock reading of the latest attempt)."""
        async def find() -> KeyRecord | None:
            assert key is not None  # only a keyed write can lose its key
            return await self.store.find_key(owner, key, moment())

        def replay(found: KeyRecord) -> PlacementResult:
            assert key is not None
            return self._replay_or_refuse(key, operation, fingerprint, found)

        async def drop_stale() -> None:  # the holder's claim has expired: forget it and try once more
            assert key is not None
            await self.store.drop_stale_key(owner, key, moment())

        return await claim_or_replay(attempt, key=key, find=find, replay=replay, drop_stale=drop_stale)

    @staticmethod
    def _replay_or_refuse(key: str, operation: str, fingerprint: str, found: KeyRecord) -> PlacementResult:
        if found.operation != operation or found.fingerprint != fingerprint:
            raise PlacementConflictError(key, found.operation, found.placement_id)
        placement, as_of = from_snapshot(found.response)
        return PlacementResult(placement, as_of, operation, replayed=True,
                               changed=bool(found.response.get("changed", True)),
                               extension=found.response.get("extension"))

    # ---- reading -------------------------------------------------------------------------------------
    async def owned(self, owner: str, limit: int = 50) -> list[Placement]:
        await self.setup()
        return await self.store.owned(owner, limit)

    async def get(self, placement_id: str, *, owner: str) -> Placement:
        placement_id = check_placement_id(placement_id)
        await self.setup()
        placement = await self.store.get(placement_id, owner)
        if placement is None:
            raise PlacementNotFoundError(placement_id)
        return placement

    async def history(self, placement_id: str, *, owner: str) -> list[dict[str, Any]]:
        placement = await self.get(placement_id, owner=owner)
        return await self.store.events(placement.id)

    # ---- state changes -------------------------------------------------------------------------------
    async def stop(self, placement_id: str, *, owner: str, key: str | None = None,
                   actor: str | None = None) -> PlacementResult:
        """Stop it; the paid period is not paused and nothing is refunded (no-op when not running)."""
        def decide(current: Placement, now: dt.datetime) -> Change:
            stopped = engine.stop(current, now)
            details: dict[str, Any] = {"paid_until": None if current.paid_until is None
                                       else current.paid_until.isoformat()}
            if stopped is not None and not stopped.committed:
                details["billed_hours"] = stopped.billed_hours
            return Change(stopped, details)

        return await self._change("stop", placement_id, owner=owner, actor=actor or owner, key=key, params={},
                                  decide=decide)

    async def start(self, placement_id: str, *, owner: str, key: str | None = None,
                    actor: str | None = None) -> PlacementResult:
        """Start it again; refused once the paid period is over (no-op when already running)."""
        return await self._change("start", placement_id, owner=owner, actor=actor or owner, key=key, params={},
                                  decide=lambda current, now: Change(engine.start(current, now), {}))

    async def extend(self, placement_id: str, duration_text: str, *, owner: str, key: str | None = None,
                     actor: str | None = None) -> PlacementResult:
        """Add whole terms (days / weeks / months) to the paid period, from ``paid_until``, at today's prices."""
        duration = self.parse_extension(duration_text)
        prices = self.data.prices.current()

        def decide(current: Placement, now: dt.datetime) -> Change:
            request = QuoteRequest(current.gpu_id, current.gpu_count, duration, Pricing.COMMITTED)
            quote = compute_quote(request, current.gpu_name, prices, now)
            extended = engine.extend(current, quote, now)
            return Change(extended, {"hours": quote.billable_hours, "total": format(quote.total, "f"),
                                     "price_list_version": quote.price_list_version,
                                     "lines": [line.description for line in quote.lines],
                                     "paid_until_before": None if current.paid_until is None
                                     else current.paid_until.isoformat()})

        return await self._change("extend", placement_id, owner=owner, actor=actor or owner, key=key,
                                  params={"hours": format(duration.hours.normalize(), "f")}, decide=decide)

    @staticmethod
    def parse_extension(text: str) -> Duration:
        stripped = text.strip()
        if stripped.startswith("-"):
            raise PlacementInputError("An extension must be a positive number of days, weeks or months.", [],
                                      "duration", "negative_duration", text=stripped[:40])
        duration = parse_duration_or_error(stripped)
        hours = duration.hours
        if hours <= 0 or hours % 24:
            raise PlacementInputError(
                f"A paid period is extended by whole terms: days, weeks (7 days) or months (30 days); "
                f"'{stripped[:40]}' is not a whole number of days.", ["1 day", "1 week", "1 month"], "duration",
                "not_whole_days", text=stripped[:40])
        return duration

    async def _change(self, operation: str, placement_id: str, *, owner: str, actor: str, key: str | None,
                      params: dict[str, Any], decide: Decide) -> PlacementResult:
        placement_id = check_placement_id(placement_id)
        if key is not None:
            validate_key(key)
        await self.setup()
        fingerprint = _fingerprint(operation, {"placement_id": placement_id, **params})
        now = self.clock()

        async def attempt() -> PlacementResult:
            nonlocal now
            now = self.clock()
            if key is not None:
                found = await self.store.find_key(owner, key, now)
                if found is not None:
                    return self._replay_or_refuse(key, operation, fingerprint, found)

            def respond(result: Placement, change: Change, now: dt.datetime = now) -> dict[str, Any]:
                extension = change.details if operation == "extend" else None
                return snapshot(result, now, changed=change.placement is not None, extension=extension)

            result, change = await self.store.change(
                placement_id, owner, actor=actor, key=key, operation=operation, fingerprint=fingerprint,
                now=now, decide=functools.partial(_decide_at, decide, now), respond=respond)
            return PlacementResult(result, now, operation, changed=change.placement is not None,
                                   extension=change.details if operation == "extend" else None)

        return await self._claim_or_replay(attempt, owner, key, operation, fingerprint, lambda: now)

