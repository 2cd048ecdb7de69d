"""The background task that sends placement reminders (24 h before ``paid_until``, and at expiry).

Every replica runs the poller, but only the holder of the ``placement-reminders`` lease polls
(``TELEGRAM_PLACEMENT_REMINDER_INTERVAL_S``, 30 s; :mod:`infra.leases`); the database still decides which
replica sends each reminder (see :mod:`gpu.placements.reminders`), so a lease that changes hands mid-poll
sends nothing twice. Time is the services' clock, so a test or a
demo moves it with ``ANCHORGPU_CLOCK_FILE`` / ``ANCHORGPU_CLOCK_OFFSET``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramForbiddenError
from sqlalchemy.exc import SQLAlchemyError

from bot.preferences import PreferenceStore, scope_for
from gpu.placements.reminders import SOON, Reminder, ReminderStore, telegram_chat_of
from gpu.placements.service import PlacementService
from infra.i18n import Lang, t
from infra.leases import Lease, run_exclusively
from infra.markup import escape

log = logging.getLogger(__name__)


def replica_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def render_reminder(reminder: Reminder, lang: Lang) -> str:
    return escape(t("tgp_reminder_soon" if reminder.kind == SOON else "tgp_reminder_expired", lang,
                    placement_id=reminder.placement_id, gpu=reminder.gpu_name, count=reminder.gpu_count,
                    paid_until=reminder.paid_until.strftime("%Y-%m-%d %H:%M")))


class ReminderPoller:
    def __init__(self, bot: Bot, placements: PlacementService, preferences: PreferenceStore,
                 interval_s: float = 30.0, replica: str | None = None) -> None:
        self.bot = bot
        self.placements = placements
        self.preferences = preferences
        self.interval_s = interval_s
        self.store = ReminderStore(placements.store.engine, replica or replica_name())

    async def _lang(self, reminder: Reminder, chat_id: int) -> Lang:
        group = reminder.owner.startswith("tg-chat:")
        prefs = await self.preferences.get(scope_for("chat", chat_id) if group else scope_for("user", chat_id))
        return prefs.lang or "ru"

    async def run_once(self) -> int:
        """Send every due reminder this replica wins; returns how many it sent."""
        await self.placements.setup()
        now = self.placements.clock()
        sent = 0
        for reminder in await self.store.due(now):
            chat_id = telegram_chat_of(reminder.owner)
            if chat_id is None or not await self.store.claim(reminder, now):
                continue
            try:
                await self.bot.send_message(chat_id, render_reminder(reminder, await self._lang(reminder, chat_id)))
                sent += 1
            except TelegramForbiddenError:  # blocked or removed from the chat: nobody to remind, do not retry
                log.info("reminder for %s not delivered: the bot cannot write to chat %s",
                         reminder.placement_id, chat_id)
            except (TelegramAPIError, OSError) as exc:
                log.warning("reminder for %s failed, will retry: %s", reminder.placement_id, exc)
                await self.store.release(reminder)
        return sent

    async def run_forever(self, lease: Lease | None = None) -> None:
        """Poll every ``interval_s``; with a ``lease``, only while this replica holds it (one poller at a
        time; a killed holder's polling moves to another replica once its lease expires)."""
        if lease is not None:
            await run_exclusively(lease, self.interval_s, self._poll)
            return
        while True:
            await self._poll()
            await asyncio.sleep(self.interval_s)

    async def _poll(self) -> None:
        try:
            await self.run_once()
        except (SQLAlchemyError, OSError, TelegramAPIError, ValueError) as exc:  # next poll tries again
            log.warning("placement reminders: %s", exc)


async def stop_task(task: asyncio.Task[None] | None) -> None:
    """Cancel the poller and wait for it (a claim in flight is one short transaction)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
