"""Skip redelivered updates; release the claim when processing fails so the redelivery is handled."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import TelegramObject, Update

from bot import metrics
from bot.delivery.dedupe_store import SqlUpdateClaims, UpdateClaims
from bot.faultpoints import stall_point

log = logging.getLogger(__name__)

# set by the journaled polling (bot/delivery/polling.py) for an update its journal has just stored as new
CLAIMED_BY_JOURNAL = "claimed_by_journal"


class DedupeMiddleware(BaseMiddleware):
    def __init__(self, claims: UpdateClaims) -> None:
        self.claims = claims
        self._pending: set[asyncio.Task[None]] = set()
        self._in_flight: set[int] = set()
        self._keeper: asyncio.Task[None] | None = None

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Update) or event.inline_query is not None:
            # Inline queries have no side effects and expire within seconds: answering a redelivered one
            # again is harmless, so they skip the two database writes a claim costs.
            return await handler(event, data)
        update_id = event.update_id
        if data.get(CLAIMED_BY_JOURNAL) and isinstance(self.claims, SqlUpdateClaims):
            return await self._journaled(handler, event, data, self.claims)
        try:
            claimed = await self.claims.claim(update_id)
        except Exception:
            # The claim store (database or Redis) is down. Dropping the update would lose it for good in
            # polling mode; answering it risks a duplicate reply only, never a duplicate quote (stored data
            # is exactly-once through idempotency keys). Handlers then explain what is unavailable.
            metrics.ERRORS.labels("DedupeStoreUnavailable").inc()
            log.warning("update %s: de-duplication store unavailable, processing it anyway", update_id,
                        exc_info=True)
            return await handler(event, data)
        if not claimed:
            metrics.DUPLICATES.inc()
            log.info("duplicate update %s skipped", update_id)
            return None
        self._track(update_id)
        try:
            await stall_point(data.get("settings"), "update_claimed", update_id)  # test-only (bot/faultpoints.py)
            result = await handler(event, data)
        except BaseException:
            self._in_flight.discard(update_id)
            # Let Telegram's redelivery (webhook 5xx) or the next attempt process it again.
            with contextlib.suppress(Exception):
                await asyncio.shield(self.claims.release(update_id))
            raise
        self._in_flight.discard(update_id)
        # Marking done is off the reply path: the user already has the answer; until it lands, the
        # live claim (ours) already makes a duplicate wait or skip.
        task = asyncio.create_task(self._complete(update_id))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return result

    async def _journaled(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                         event: Update, data: dict[str, Any], claims: SqlUpdateClaims) -> Any:
        """An update the polling journal has just stored as new, in the database the claims live in.

        The journal's insert already made it ours alone (a repeated id is never new, and one process
        polls), so it skips the claim and its lease; finished, it is recorded done like a claimed one, and a
        replay of it meets that row. Failed, there is nothing to release: the retry claims as usual.
        """
        await stall_point(data.get("settings"), "update_claimed", event.update_id)  # test-only
        result = await handler(event, data)
        task = asyncio.create_task(self._record_done(claims, event.update_id))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return result

    @staticmethod
    async def _record_done(claims: SqlUpdateClaims, update_id: int) -> None:
        try:
            await claims.record_done(update_id)
        except Exception:
            log.warning("could not mark update %s done", update_id, exc_info=True)

    async def _complete(self, update_id: int) -> None:
        try:
            await self.claims.complete(update_id)
        except Exception:
            log.warning("could not mark update %s done", update_id, exc_info=True)

    def _track(self, update_id: int) -> None:
        self._in_flight.add(update_id)
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_alive())

    async def _keep_alive(self) -> None:
        """One task refreshes the leases of every update still in flight, until none is left."""
        while self._in_flight:
            await asyncio.sleep(self.claims.lease_s / 3)
            if not self._in_flight:
                break
            try:
                await self.claims.heartbeat(list(self._in_flight))
            except Exception:  # a missed heartbeat is retried; it must never kill an update
                log.warning("heartbeat for %s updates failed", len(self._in_flight), exc_info=True)
