"""Reminders about a placement's paid period: 24 h before ``paid_until`` and when it is over.

Sent once, whatever the number of replicas and restarts: a reminder is a row of ``placement_reminders``
keyed by (placement, kind, the ``paid_until`` it is about). A poller inserts the rows that are due
(``ON CONFLICT DO NOTHING``) and then claims each one with ``UPDATE … SET sent_at = now WHERE sent_at IS
NULL``: the database lets exactly one replica's UPDATE match, and only that replica sends. An extension
moves ``paid_until``, so the new end gets reminders of its own. A send that fails is released (its
``sent_at`` cleared) and retried at the next poll; a replica that dies between claim and send loses that
one reminder (at most once, never twice).

Only placements of Telegram owners (``tg:<user>``, ``tg-chat:<chat>``) are reminded: other fronts have
nobody to write to. No aiogram here: the bot's poller (``bot/delivery/placement_reminders.py``) does the sending.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from sqlalchemy import BigInteger, ColumnElement, ForeignKey, String, Table, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from gpu.placements.store import PLACEMENTS, utc
from infra.db import Base, conflict_insert

SOON = "soon"          # 24 h before paid_until
EXPIRED = "expired"    # paid_until has passed
REMIND_BEFORE = dt.timedelta(hours=24)
# an expiry older than this is not announced any more (a bot that was down for weeks does not spam)
EXPIRY_GRACE = dt.timedelta(days=3)
TELEGRAM_OWNER_PREFIXES = ("tg:", "tg-chat:")


class PlacementReminderRow(Base):
    __tablename__ = "placement_reminders"

    placement_id: Mapped[str] = mapped_column(String(32), ForeignKey("placements.id", ondelete="CASCADE"),
                                              primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)  # soon | expired
    # epoch seconds of the paid_until this reminder is about (an extension makes new reminders)
    paid_until: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner: Mapped[str] = mapped_column(String(128))
    due_at: Mapped[int] = mapped_column(BigInteger)
    sent_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # NULL: not claimed yet
    sent_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the replica that claimed it


REMINDERS = cast(Table, PlacementReminderRow.__table__)


@dataclass(frozen=True)
class Reminder:
    placement_id: str
    owner: str
    kind: str
    paid_until: dt.datetime
    gpu_name: str
    gpu_count: int

    @property
    def epoch(self) -> int:
        return int(self.paid_until.timestamp())

    @property
    def due_at(self) -> dt.datetime:
        return self.paid_until - REMIND_BEFORE if self.kind == SOON else self.paid_until


def due_kind(paid_until: dt.datetime, created_at: dt.datetime, now: dt.datetime) -> str | None:
    """Which reminder is due now for a paid period ending at ``paid_until`` (None: none).

    The 24-hour reminder is skipped for a period that was already that short when rented (it would
    arrive together with the rent), and once the period is over only the expiry is announced.
    """
    if now >= paid_until:
        return EXPIRED if now - paid_until <= EXPIRY_GRACE else None
    soon_at = paid_until - REMIND_BEFORE
    if now >= soon_at and created_at < soon_at:
        return SOON
    return None


def telegram_chat_of(owner: str) -> int | None:
    """The chat a reminder goes to: a user's private chat (``tg:<user>``) or the group (``tg-chat:<chat>``)."""
    for prefix in TELEGRAM_OWNER_PREFIXES:
        if owner.startswith(prefix):
            body = owner.removeprefix(prefix)
            if body.lstrip("-").isdecimal():
                return int(body)
    return None


class ReminderStore:
    def __init__(self, engine: AsyncEngine, replica: str) -> None:
        self.engine = engine
        self.replica = replica[:64]
        self._schedule = conflict_insert(engine, REMINDERS).on_conflict_do_nothing(
            index_elements=[REMINDERS.c.placement_id, REMINDERS.c.kind, REMINDERS.c.paid_until])

    async def due(self, now: dt.datetime) -> list[Reminder]:
        """Reminders due at ``now`` and not sent yet (what a poll tries to claim)."""
        query = (select(PLACEMENTS.c.id, PLACEMENTS.c.owner, PLACEMENTS.c.paid_until, PLACEMENTS.c.created_at,
                        PLACEMENTS.c.gpu_name, PLACEMENTS.c.gpu_count)
                 .where(PLACEMENTS.c.paid_until.is_not(None),
                        or_(*(PLACEMENTS.c.owner.startswith(p) for p in TELEGRAM_OWNER_PREFIXES)),
                        PLACEMENTS.c.paid_until <= now + REMIND_BEFORE,
                        PLACEMENTS.c.paid_until >= now - EXPIRY_GRACE))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        found: list[Reminder] = []
        for row in rows:
            paid_until, created_at = utc(row.paid_until), utc(row.created_at)
            assert paid_until is not None and created_at is not None
            kind = due_kind(paid_until, created_at, now)
            if kind is not None:
                found.append(Reminder(row.id, row.owner, kind, paid_until, row.gpu_name, int(row.gpu_count)))
        if not found:
            return []
        sent = await self._sent({r.placement_id for r in found})
        return [r for r in found if (r.placement_id, r.kind, r.epoch) not in sent]

    async def _sent(self, placement_ids: Iterable[str]) -> set[tuple[str, str, int]]:
        query = (select(REMINDERS.c.placement_id, REMINDERS.c.kind, REMINDERS.c.paid_until)
                 .where(REMINDERS.c.placement_id.in_(list(placement_ids)), REMINDERS.c.sent_at.is_not(None)))
        async with self.engine.connect() as conn:
            return {(r[0], r[1], int(r[2])) for r in (await conn.execute(query)).all()}

    def _this(self, reminder: Reminder) -> ColumnElement[bool]:
        return and_(REMINDERS.c.placement_id == reminder.placement_id, REMINDERS.c.kind == reminder.kind,
                    REMINDERS.c.paid_until == reminder.epoch)

    async def claim(self, reminder: Reminder, now: dt.datetime) -> bool:
        """True for exactly one caller per reminder, across processes: that caller sends it."""
        async with self.engine.begin() as conn:
            await conn.execute(self._schedule, dict(
                placement_id=reminder.placement_id, kind=reminder.kind, paid_until=reminder.epoch,
                owner=reminder.owner, due_at=int(reminder.due_at.timestamp()), sent_at=None, sent_by=None))
            claimed = await conn.execute(update(REMINDERS).where(self._this(reminder), REMINDERS.c.sent_at.is_(None))
                                         .values(sent_at=int(now.timestamp()), sent_by=self.replica))
        return claimed.rowcount == 1

    async def release(self, reminder: Reminder) -> None:
        """Give a claimed reminder back (its send failed): the next poll of any replica tries again."""
        async with self.engine.begin() as conn:
            await conn.execute(update(REMINDERS).where(self._this(reminder), REMINDERS.c.sent_by == self.replica)
                               .values(sent_at=None, sent_by=None))
