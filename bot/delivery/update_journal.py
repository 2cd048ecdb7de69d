"""The polling journal: every update fetched by ``getUpdates`` is stored (with its JSON) before its offset
is confirmed to Telegram, and marked done once handled.

Telegram forgets an update as soon as the next ``getUpdates`` carries a higher offset, so whatever the
process has confirmed but not finished (SIGKILL, OOM, a deploy that outlived its grace period) exists only
here: the next start replays the rows still pending. The de-duplication claims
(:mod:`bot.delivery.dedupe_store`) keep a replay from answering twice: an update that was answered
before the crash but not yet marked done here is skipped as a duplicate.

Each start of an attempt counts (the first when the row is stored, one per replay, one per in-process
retry): an update that kills the process every time is given up after ``max_attempts`` instead of
crash-looping the bot. Finished rows stay for the de-duplication TTL, so a late redelivery is recognised
without a handler run, then :meth:`SqlUpdateJournal.purge` deletes them.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import BigInteger, Float, Integer, String, Table, Text, bindparam, delete, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from infra.batching import MicroBatcher
from infra.db import Base, conflict_insert, run_in_transaction

PENDING = "pending"
DONE = "done"
FAILED = "failed"
MAX_ATTEMPTS = 5
# Nobody waits for "done" (the reply is out): completions linger to share one transaction. A crash inside
# the window leaves the row pending; its replay is skipped by the de-duplication claim.
DONE_LINGER_S = 0.05


class JournaledUpdate(Base):
    __tablename__ = "telegram_update_journal"

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    payload: Mapped[str] = mapped_column(Text)  # the update as JSON, Bot API field names
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[float] = mapped_column(Float, index=True)


@dataclass(frozen=True)
class Entry:
    update_id: int
    payload: str
    attempts: int  # attempts started so far, this one included


class SqlUpdateJournal:
    def __init__(self, engine: AsyncEngine, ttl_s: float, max_attempts: int = MAX_ATTEMPTS) -> None:
        self._engine = engine
        self._table: Table = JournaledUpdate.__table__  # type: ignore[assignment]
        self.ttl_s = ttl_s
        self.max_attempts = max_attempts
        table = self._table
        self._insert = (conflict_insert(engine, table).on_conflict_do_nothing(index_elements=[table.c.update_id])
                        .returning(table.c.update_id))
        self._finish = (update(table).where(table.c.update_id.in_(bindparam("ids", expanding=True)),
                                            table.c.status == PENDING)
                        .values(status=bindparam("status"), updated_at=bindparam("now")))
        self._done_batcher: MicroBatcher[int, None] = MicroBatcher(self._done_batch, linger_s=DONE_LINGER_S)

    async def store(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Journal a ``getUpdates`` batch (id, JSON) in one transaction; returns the ids that were new.

        An id already journaled (Telegram repeating an update whose offset the previous process never
        confirmed) is not returned: its row is being replayed, or it is finished."""
        if not updates:
            return set()
        now = time.time()
        rows = [{"update_id": update_id, "payload": payload, "status": PENDING, "attempts": 1, "updated_at": now}
                for update_id, payload in dict(updates).items()]
        return await run_in_transaction(self._engine,
                                        lambda conn: set(conn.execute(self._insert, rows).scalars()))

    async def take_unfinished(self, exclude: Collection[int] = ()) -> tuple[list[Entry], list[Entry]]:
        """The pending rows a previous process left, oldest first, as (to replay, given up).

        Each row to replay counts one more attempt; a row that already had ``max_attempts`` is marked
        failed instead (it is returned so that the caller can log it). ``exclude``: ids this process is
        handling right now."""
        table = self._table
        skip = set(exclude)

        def take(conn: Connection) -> tuple[list[Entry], list[Entry]]:
            rows = conn.execute(select(table.c.update_id, table.c.payload, table.c.attempts)
                                .where(table.c.status == PENDING).order_by(table.c.update_id)).all()
            replay: list[Entry] = []
            given_up: list[Entry] = []
            for update_id, payload, attempts in rows:
                if update_id in skip:
                    continue
                if attempts >= self.max_attempts:
                    given_up.append(Entry(update_id, payload, attempts))
                else:
                    replay.append(Entry(update_id, payload, attempts + 1))
            now = time.time()
            if replay:
                conn.execute(update(table).where(table.c.update_id.in_([e.update_id for e in replay]))
                             .values(attempts=table.c.attempts + 1, updated_at=now))
            if given_up:
                conn.execute(self._finish, {"ids": [e.update_id for e in given_up], "status": FAILED, "now": now})
            return replay, given_up

        return await run_in_transaction(self._engine, take)

    async def retry(self, update_id: int) -> int:
        """Count one more attempt of an update being handled; returns the attempts so far."""
        table = self._table

        def bump(conn: Connection) -> int:
            conn.execute(update(table).where(table.c.update_id == update_id)
                         .values(attempts=table.c.attempts + 1, updated_at=time.time()))
            return int(conn.execute(select(table.c.attempts).where(table.c.update_id == update_id)).scalar_one())

        return await run_in_transaction(self._engine, bump)

    async def done(self, update_id: int) -> None:
        await self._done_batcher.submit(update_id)

    async def _done_batch(self, update_ids: list[int]) -> list[None]:
        params = {"ids": list(dict.fromkeys(update_ids)), "status": DONE, "now": time.time()}
        await run_in_transaction(self._engine, lambda conn: conn.execute(self._finish, params))
        return [None] * len(update_ids)

    async def fail(self, update_id: int) -> None:
        """Give up on an update: it is never replayed."""
        params = {"ids": [update_id], "status": FAILED, "now": time.time()}
        await run_in_transaction(self._engine, lambda conn: conn.execute(self._finish, params))

    async def status(self, update_id: int) -> tuple[str, int] | None:
        """(status, attempts) of a journaled update; None when it is not (or no longer) journaled."""
        table = self._table
        async with self._engine.connect() as conn:
            row = (await conn.execute(select(table.c.status, table.c.attempts)
                                      .where(table.c.update_id == update_id))).first()
        return None if row is None else (str(row[0]), int(row[1]))

    async def purge(self) -> int:
        """Delete the rows finished longer than the TTL ago; pending rows are kept, however old."""
        table = self._table
        cutoff = time.time() - self.ttl_s
        statement = delete(table).where(table.c.status.in_([DONE, FAILED]), table.c.updated_at < cutoff)
        result = await run_in_transaction(self._engine, lambda conn: conn.execute(statement))
        return int(result.rowcount or 0)

    async def aclose(self) -> None:
        """Lands the completions still lingering."""
        await self._done_batcher.aclose()
