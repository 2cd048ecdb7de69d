"""Database leases: one holder at a time for a named piece of work, taken over when the holder dies.

A lease is a row of ``leases`` (name, owner, expires_at). :meth:`Lease.acquire` is one transaction,
``INSERT … ON CONFLICT DO NOTHING`` then ``UPDATE … SET owner = me WHERE name = … AND (expires_at < now OR
owner = me)``: on SQLite writers are serialized, on PostgreSQL the second UPDATE waits for the first's row
lock and re-reads the row, so of two replicas asking at once exactly one UPDATE matches. The holder renews
well before ``expires_at``; a replica that is killed stops renewing, and once its lease has expired the next
replica to ask takes it over.

Time is the database's clock (``clock_timestamp()`` on PostgreSQL, ``julianday('now')`` on SQLite), in
epoch milliseconds: replicas on different hosts compare against one clock, so a skewed host cannot steal a
live lease or keep a dead one. It is deliberately not the app's clock (:mod:`infra.clock`), which tests and
demos pin or shift: a pinned clock would never let a lease expire.

A lease makes work run on one replica at a time; it does not fence a holder that stalls past its expiry.
Work that must happen exactly once also claims each item in the database (see ``placement_reminders`` and
``answer_jobs``); the lease keeps every replica from polling the same rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

from sqlalchemy import BigInteger, ColumnElement, String, Table, delete, extract, func, or_, select, update
from sqlalchemy import cast as sql_cast
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from infra.db import Base, conflict_insert

log = logging.getLogger(__name__)
T = TypeVar("T")
RELEASE_WAIT_S = 3.0  # at shutdown; a lease that cannot be released in time simply expires

_UNIX_EPOCH_JULIAN_DAY = 2440587.5
_MS_PER_DAY = 86_400_000


class LeaseRow(Base):
    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[int] = mapped_column(BigInteger)  # epoch ms, the database's clock


LEASES = cast(Table, LeaseRow.__table__)


def replica_id() -> str:
    """This process among the replicas: host and pid (a restarted process is a new owner)."""
    return f"{socket.gethostname()}:{os.getpid()}"[:64]


def db_now_ms(engine: AsyncEngine) -> ColumnElement[int]:
    """The database server's current time in epoch milliseconds, as a SQL expression."""
    if engine.dialect.name == "postgresql":
        # clock_timestamp(), not now(): now() is the transaction's start, stale in a long transaction
        return sql_cast(extract("epoch", func.clock_timestamp()) * 1000, BigInteger)
    return sql_cast((func.julianday("now") - _UNIX_EPOCH_JULIAN_DAY) * _MS_PER_DAY, BigInteger)


async def uncancelled(operation: Coroutine[Any, Any, T]) -> T:
    """Await a short database transaction that a cancellation may not cut in half.

    A task cancelled inside ``engine.begin()`` can leave its SQLite connection holding the write lock until
    the connection is collected; the next write of the same process (releasing the lease at shutdown) then
    waits out the whole busy timeout. Here the transaction finishes first, then the cancellation goes on.
    """
    task = asyncio.ensure_future(operation)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await task
        raise


class Lease:
    """One named lease as seen by one owner."""

    def __init__(self, engine: AsyncEngine, name: str, owner: str | None = None, ttl_s: float = 30.0) -> None:
        if ttl_s <= 0:
            raise ValueError("a lease needs a positive ttl")
        self.engine = engine
        self.name = name[:64]
        self.owner = (owner or replica_id())[:64]
        self.ttl_s = ttl_s
        self._insert = conflict_insert(engine, LEASES).on_conflict_do_nothing(index_elements=[LEASES.c.name])

    @property
    def _ttl_ms(self) -> int:
        return max(1, math.ceil(self.ttl_s * 1000))

    def _this(self) -> ColumnElement[bool]:
        return LEASES.c.name == self.name

    async def acquire(self) -> bool:
        """Take the lease if it is free or expired, or extend it if it is ours; True when we hold it now."""
        now = db_now_ms(self.engine)
        async with self.engine.begin() as conn:
            # expires_at 0: a new row is "expired" at once, so the one UPDATE below decides for both cases
            await conn.execute(self._insert, dict(name=self.name, owner=self.owner, expires_at=0))
            taken = await conn.execute(
                update(LEASES).where(self._this(), or_(LEASES.c.expires_at < now, LEASES.c.owner == self.owner))
                .values(owner=self.owner, expires_at=now + self._ttl_ms))
        return taken.rowcount == 1

    async def renew(self) -> bool:
        """Extend the lease if we still hold it (nobody took it over); False when it is someone else's."""
        now = db_now_ms(self.engine)
        async with self.engine.begin() as conn:
            renewed = await conn.execute(update(LEASES).where(self._this(), LEASES.c.owner == self.owner)
                                         .values(expires_at=now + self._ttl_ms))
        return renewed.rowcount == 1

    async def release(self) -> None:
        """Give the lease up (a clean shutdown), so another replica need not wait for it to expire."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(LEASES).where(self._this(), LEASES.c.owner == self.owner))

    async def holder(self) -> str | None:
        """Who holds the lease now (None: nobody, or it has expired)."""
        query = select(LEASES.c.owner).where(self._this(), LEASES.c.expires_at >= db_now_ms(self.engine))
        async with self.engine.connect() as conn:
            return cast(str | None, (await conn.execute(query)).scalar_one_or_none())

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """Renew the lease in the background while the block runs (work longer than the ttl keeps it)."""
        task = asyncio.create_task(self._keep_renewing())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _keep_renewing(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            try:
                if not await uncancelled(self.renew()):
                    # another replica has it: the work in hand finishes (its items are claimed one by one)
                    log.warning("lease %s was taken over while %s was working", self.name, self.owner)
                    return
            except Exception as exc:  # the database is down: the next renewal or acquire tries again
                log.warning("lease %s could not be renewed: %s", self.name, exc)


async def run_exclusively(lease: Lease, interval_s: float, work: Callable[[], Awaitable[object]]) -> None:
    """Run ``work`` every ``interval_s`` on whichever replica holds ``lease``; forever, until cancelled.

    Every replica runs this loop. The holder renews at a third of the ttl (also between runs, so a lease
    shorter than the interval stays put) and runs ``work``; the others keep asking and take the lease over
    once a killed holder's has expired, running ``work`` at once. Cancelling releases the lease.
    """
    last_run = -math.inf
    tick = min(interval_s, lease.ttl_s / 3)
    try:
        while True:
            try:
                held = await uncancelled(lease.acquire())
            except Exception as exc:  # the database is down: nobody can hold it, ask again next tick
                log.warning("lease %s: %s", lease.name, exc)
                held = False
            if not held:
                last_run = -math.inf  # whenever we get it (a takeover), work at once
            elif time.monotonic() - last_run >= interval_s:
                last_run = time.monotonic()
                try:
                    async with lease.kept():
                        await work()
                except Exception:  # the work's own failure must not stop the schedule
                    log.exception("%s failed; it runs again in %s s", lease.name, interval_s)
            await asyncio.sleep(tick)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(lease.release()), RELEASE_WAIT_S)
