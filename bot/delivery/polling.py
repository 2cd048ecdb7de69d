"""Long polling that loses no update: journal the batch, then confirm it, then handle it.

aiogram's ``Dispatcher.start_polling`` confirms an update (the next ``getUpdates`` offset) as soon as it
has started handling it: a process killed mid-update loses it for good. Here each ``getUpdates`` batch is
first written to :class:`bot.delivery.update_journal.SqlUpdateJournal` in one transaction; only then does the next
``getUpdates`` carry the higher offset. Every update is handled as its own task (bounded, like aiogram's
``tasks_concurrency_limit``) and marked done when it finishes; a start replays the rows a previous process
left pending before it polls. The de-duplication claims make the replay exactly-once. When the claims are
rows of the journal's own database (no Redis), an update the journal has just stored as new is handled
without a claim: that insert already made it this process's alone, and it is recorded done like a claimed
one (one statement less on every reply's path).

When the journal cannot be written (the database is down), the batch is handled without it and confirmed
only after its handlers have finished, so a crash then still leaves it with Telegram.

What stays as in aiogram: SIGTERM/SIGINT stop polling gracefully (in-flight updates get a grace period,
the rest stay pending for the next start), network errors back off (aiogram's ``BackoffConfig``), the
startup and shutdown hooks run, and ``allowed_updates`` is passed through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Iterable
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.dispatcher.dispatcher import DEFAULT_BACKOFF_CONFIG
from aiogram.methods import GetUpdates, TelegramMethod
from aiogram.types import Update
from aiogram.utils.backoff import Backoff, BackoffConfig
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.dedupe import CLAIMED_BY_JOURNAL
from bot.delivery.update_journal import SqlUpdateJournal

log = logging.getLogger(__name__)

POLLING_TIMEOUT_S = 10  # aiogram's start_polling default
CONCURRENCY = 256  # updates handled at once; further batches wait in Telegram (unconfirmed), not in memory
STORE_TIMEOUT_S = 5.0  # a journal write slower than this counts as "database down"
SHUTDOWN_GRACE_S = 8.0  # in-flight updates may finish after SIGTERM (docker stop waits 10 s)
RETRY_DELAY_S = 1.0  # first in-process retry of a failed update; doubles each time
PURGE_EVERY_S = 3600.0


def payload_of(update: Update) -> str:
    """The update as the Bot API sent it (field names like ``from``), for :func:`Update.model_validate`."""
    return update.model_dump_json(exclude_unset=True, by_alias=True)


class JournaledPolling:
    def __init__(self, dispatcher: Dispatcher, bot: Bot, journal: SqlUpdateJournal, *,
                 polling_timeout: int = POLLING_TIMEOUT_S, concurrency: int = CONCURRENCY,
                 backoff_config: BackoffConfig = DEFAULT_BACKOFF_CONFIG, store_timeout_s: float = STORE_TIMEOUT_S,
                 shutdown_grace_s: float = SHUTDOWN_GRACE_S, retry_delay_s: float = RETRY_DELAY_S,
                 claims_in_journal_db: bool = False) -> None:
        self.dispatcher = dispatcher
        # the de-duplication claims are rows of the journal's database: a new journal row is the claim
        self.claims_in_journal_db = claims_in_journal_db
        self.bot = bot
        self.journal = journal
        self.polling_timeout = polling_timeout
        self.backoff_config = backoff_config
        self.store_timeout_s = store_timeout_s
        self.shutdown_grace_s = shutdown_grace_s
        self.retry_delay_s = retry_delay_s
        self._slots = asyncio.Semaphore(concurrency)
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._replayed = False
        self._purged_at = 0.0
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run(self, *, allowed_updates: list[str] | None = None, handle_signals: bool = True,
                  close_bot_session: bool = True, **kwargs: Any) -> None:
        """Poll until :meth:`stop` (or SIGTERM/SIGINT with ``handle_signals``); returns after shutdown."""
        workflow_data = {"dispatcher": self.dispatcher, "bots": (self.bot,), **self.dispatcher.workflow_data,
                         **kwargs}
        workflow_data.pop("bot", None)
        if handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError):
                    loop.add_signal_handler(sig, self._on_signal, sig)
        await self.dispatcher.emit_startup(bot=self.bot, **workflow_data)
        try:
            await self._purge()
            poller = asyncio.create_task(self._poll(allowed_updates, workflow_data), name="polling")
            stopped = asyncio.create_task(self._stop.wait())
            await asyncio.wait({poller, stopped}, return_when=asyncio.FIRST_COMPLETED)
            for task in (poller, stopped):
                task.cancel()
            await asyncio.gather(poller, stopped, return_exceptions=True)
            await self._drain()
            if not poller.cancelled() and poller.exception() is not None:
                raise poller.exception()  # type: ignore[misc]
        finally:
            log.info("polling stopped")
            with contextlib.suppress(Exception):
                await self.journal.aclose()
            try:
                await self.dispatcher.emit_shutdown(bot=self.bot, **workflow_data)
            finally:
                if close_bot_session:
                    await self.bot.session.close()

    def _on_signal(self, sig: signal.Signals) -> None:
        log.warning("received %s, stopping polling", sig.name)
        self._stop.set()

    async def _poll(self, allowed_updates: list[str] | None, workflow_data: dict[str, Any]) -> None:
        backoff = Backoff(config=self.backoff_config)
        get_updates = GetUpdates(timeout=self.polling_timeout, allowed_updates=allowed_updates)
        request: dict[str, Any] = {}
        if self.bot.session.timeout:  # the long poll must not look like a timed-out request
            request["request_timeout"] = int(self.bot.session.timeout + self.polling_timeout)
        failed = False
        while True:
            if not self._replayed:
                await self._replay(workflow_data)
            if time.monotonic() - self._purged_at > PURGE_EVERY_S:
                await self._purge()
            try:
                # the offset it carries confirms the previous batch, journaled (or handled) by now
                updates = await self.bot(get_updates, **request)
            except Exception as exc:
                failed = True
                log.error("failed to fetch updates - %s: %s; retrying in %.1f s (attempt %d)",
                          type(exc).__name__, exc, backoff.next_delay, backoff.counter)
                await backoff.asleep()
                continue
            if failed:
                log.info("fetching updates again after %d failed attempts", backoff.counter)
                backoff.reset()
                failed = False
            if not updates:
                continue
            try:
                fresh = await asyncio.wait_for(
                    self.journal.store([(u.update_id, payload_of(u)) for u in updates]), self.store_timeout_s)
            except Exception:
                log.warning("update journal unavailable: handling %d updates before confirming them",
                            len(updates), exc_info=True)
                await self._handle_unjournaled(updates, workflow_data)
            else:
                for update in updates:
                    if update.update_id in fresh:
                        await self._spawn(update, 1, workflow_data, fresh=True)
            get_updates.offset = updates[-1].update_id + 1

    async def _replay(self, workflow_data: dict[str, Any]) -> None:
        try:
            replay, given_up = await self.journal.take_unfinished(exclude=self._in_flight.keys())
        except Exception:
            log.warning("could not read the update journal; replaying later", exc_info=True)
            return
        self._replayed = True
        for entry in given_up:
            log.error("update %s was not finished after %d attempts: giving up on it", entry.update_id,
                      entry.attempts)
        if replay:
            log.info("replaying %d updates left unfinished by the previous process", len(replay))
        for entry in replay:
            try:
                update = Update.model_validate_json(entry.payload, context={"bot": self.bot})
            except ValueError:
                log.error("journaled update %s cannot be read: giving up on it", entry.update_id, exc_info=True)
                with contextlib.suppress(Exception):
                    await self.journal.fail(entry.update_id)
                continue
            await self._spawn(update, entry.attempts, workflow_data)

    async def _spawn(self, update: Update, attempt: int, workflow_data: dict[str, Any], fresh: bool = False) -> None:
        await self._slots.acquire()
        task = asyncio.create_task(self._handle(update, attempt, workflow_data, fresh))
        self._in_flight[update.update_id] = task

    async def _handle(self, update: Update, attempt: int, workflow_data: dict[str, Any], fresh: bool = False) -> None:
        update_id = update.update_id
        # the first attempt of an update just journaled as new needs no claim; retries and replays claim
        data = {**workflow_data, CLAIMED_BY_JOURNAL: True} if fresh and self.claims_in_journal_db else workflow_data
        try:
            while not await self._feed(update, data):
                data = workflow_data
                if attempt >= self.journal.max_attempts:
                    log.error("update %s failed %d times: giving up on it", update_id, attempt)
                    with contextlib.suppress(Exception):
                        await self.journal.fail(update_id)
                    return
                await asyncio.sleep(self.retry_delay_s * 2 ** (attempt - 1))
                try:
                    attempt = await self.journal.retry(update_id)
                except Exception:  # the count is kept in memory until the journal answers again
                    attempt += 1
            try:
                await self.journal.done(update_id)
            except Exception:  # pending stays: a replay is skipped by its de-duplication claim
                log.warning("could not mark update %s done in the journal", update_id, exc_info=True)
        finally:
            self._in_flight.pop(update_id, None)
            self._slots.release()

    async def _feed(self, update: Update, workflow_data: dict[str, Any]) -> bool:
        """One attempt; False when it raised (the error boundary let it through, e.g. Telegram is down)."""
        try:
            response = await self.dispatcher.feed_update(self.bot, update, **workflow_data)
            if isinstance(response, TelegramMethod):
                await self.dispatcher.silent_call_request(bot=self.bot, result=response)
        except Exception:
            log.warning("update %s raised while being handled", update.update_id, exc_info=True)
            return False
        return True

    async def _handle_unjournaled(self, updates: Iterable[Update], workflow_data: dict[str, Any]) -> None:
        async def once(update: Update) -> None:
            async with self._slots:
                await self._feed(update, workflow_data)

        await asyncio.gather(*(once(u) for u in updates if u.update_id not in self._in_flight))

    async def _drain(self) -> None:
        """The graceful part of a stop: in-flight updates get the grace period, the rest stay journaled."""
        tasks = list(self._in_flight.values())
        if not tasks:
            return
        log.info("waiting up to %.0f s for %d updates in flight", self.shutdown_grace_s, len(tasks))
        _, pending = await asyncio.wait(tasks, timeout=self.shutdown_grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if pending:
            log.warning("%d updates were not finished; the next start replays them", len(pending))

    async def _purge(self) -> None:
        self._purged_at = time.monotonic()
        try:
            purged = await self.journal.purge()
        except Exception:
            log.warning("could not purge the update journal", exc_info=True)
            return
        if purged:
            log.info("purged %d finished updates from the journal", purged)


async def run_journaled_polling(dispatcher: Dispatcher, bot: Bot, engine: AsyncEngine, ttl_s: float,
                                claims_in_journal_db: bool = False, **kwargs: Any) -> None:
    """What ``dispatcher.start_polling(bot, ...)`` does, with the journal on ``engine`` (rows kept ``ttl_s``)."""
    await JournaledPolling(dispatcher, bot, SqlUpdateJournal(engine, ttl_s),
                           claims_in_journal_db=claims_in_journal_db).run(**kwargs)
