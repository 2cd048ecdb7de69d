"""Update de-duplication: each ``update_id`` is processed once, even across restarts and replicas.

Telegram redelivers an update when a webhook answers non-2xx or when polling restarts before confirming
the offset; ``update_id`` is not a reliable watermark (it restarts at random after a quiet week), so we
keep a seen-set with a TTL. A claim is a lease, not a tombstone: the owner refreshes it while it works and
marks it done at the end; if the owner dies (SIGKILL mid-update), its lease expires and a redelivered copy
takes over instead of being dropped. A duplicate that arrives while another process holds a live lease
waits for the outcome rather than answering twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Collection
from typing import Protocol

from sqlalchemy import BigInteger, Float, String, Table, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from infra.batching import MicroBatcher
from infra.db import Base, conflict_insert, run_in_transaction
from infra.redis_conn import REDIS_DOWN_ERRORS, Outage, fail_fast_redis

PROCESSING = "processing"
DONE = "done"
# Marking updates done waits up to this long to share one transaction. A crash inside the window leaves
# the claim "processing" until its lease expires, as a crash just before the reply would.
COMPLETION_LINGER_S = 0.05


class UpdateClaims(Protocol):
    lease_s: float

    async def claim(self, update_id: int) -> bool:
        """True when this process must handle the update; False for a duplicate."""
        ...

    async def heartbeat(self, update_ids: Collection[int]) -> None:
        """Extend the leases of these in-flight updates (one call for all of them)."""
        ...

    async def complete(self, update_id: int) -> None: ...

    async def release(self, update_id: int) -> None:
        """Forget a failed attempt so that Telegram's redelivery is processed."""
        ...

    async def aclose(self) -> None: ...


class ProcessedUpdate(Base):
    __tablename__ = "telegram_updates"

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    status: Mapped[str] = mapped_column(String(16))
    owner: Mapped[str] = mapped_column(String(32))
    claimed_at: Mapped[float] = mapped_column(Float, index=True)


class SqlUpdateClaims:
    # SQLAlchemy Core, and group commit (:class:`MicroBatcher`): the claims and completions of the updates
    # handled in one turn of the event loop share one statement.
    def __init__(self, engine: AsyncEngine, ttl_s: float, lease_s: float = 15.0,
                 owner: str | None = None) -> None:
        self._engine = engine
        self._table: Table = ProcessedUpdate.__table__  # type: ignore[assignment]
        self.ttl_s = ttl_s
        self.lease_s = lease_s
        self.owner = owner or uuid.uuid4().hex
        self._claims_since_sweep = 0
        table = self._table
        self._mark_done = (update(table).where(table.c.update_id.in_(bindparam("ids", expanding=True)))
                           .values(status=DONE, claimed_at=bindparam("now")))
        self._claim_rows = (conflict_insert(engine, table).on_conflict_do_nothing(index_elements=[table.c.update_id])
                            .returning(table.c.update_id))
        self._refresh = (update(table).where(table.c.update_id.in_(bindparam("ids", expanding=True)),
                                             table.c.owner == self.owner, table.c.status == PROCESSING)
                         .values(claimed_at=bindparam("now")))
        inserted = conflict_insert(engine, table)
        self._record_done = inserted.on_conflict_do_update(
            index_elements=[table.c.update_id],
            set_={"status": inserted.excluded.status, "claimed_at": inserted.excluded.claimed_at})
        self._claim_batcher: MicroBatcher[int, bool] = MicroBatcher(self._claim_batch)
        # Nobody waits for "done" (the reply is out), so completions linger to share one transaction.
        self._done_batcher: MicroBatcher[int, None] = MicroBatcher(self._complete_batch,
                                                                   linger_s=COMPLETION_LINGER_S)
        self._recorded_batcher: MicroBatcher[int, None] = MicroBatcher(self._record_done_batch,
                                                                       linger_s=COMPLETION_LINGER_S)

    async def claim(self, update_id: int) -> bool:
        if await self._claim_batcher.submit(update_id):
            await self._maybe_sweep()
            return True
        return await self._claim_contended(update_id)

    async def _claim_batch(self, update_ids: list[int]) -> list[bool]:
        """One INSERT for the batch; the ids it inserted are ours (a repeated id only once)."""
        now = time.time()
        rows = [{"update_id": update_id, "status": PROCESSING, "owner": self.owner, "claimed_at": now}
                for update_id in dict.fromkeys(update_ids)]
        # one prepared statement, many parameter sets: SQLAlchemy sends them as one multi-row INSERT
        inserted = await run_in_transaction(self._engine,
                                            lambda conn: set(conn.execute(self._claim_rows, rows).scalars()))
        results = []
        for update_id in update_ids:
            results.append(update_id in inserted)
            inserted.discard(update_id)
        return results

    async def _claim_contended(self, update_id: int) -> bool:
        """The row exists: a duplicate of a finished update, ours in flight, or another owner's lease."""
        table = self._table
        waited_from = time.monotonic()
        while True:
            now = time.time()
            try:
                async with self._engine.begin() as conn:
                    await conn.execute(insert(table).values(update_id=update_id, status=PROCESSING,
                                                            owner=self.owner, claimed_at=now))
                return True
            except IntegrityError:
                pass
            async with self._engine.connect() as conn:
                row = (await conn.execute(select(table.c.status, table.c.owner, table.c.claimed_at)
                                          .where(table.c.update_id == update_id))).first()
            if row is None:
                continue  # released between our insert and read: try again
            status, owner, claimed_at = row
            if status == DONE or owner == self.owner:
                return False
            if now - claimed_at > self.lease_s:
                async with self._engine.begin() as conn:
                    result = await conn.execute(
                        update(table)
                        .where(table.c.update_id == update_id, table.c.owner == owner,
                               table.c.claimed_at == claimed_at, table.c.status == PROCESSING)
                        .values(owner=self.owner, claimed_at=now))
                if result.rowcount == 1:
                    return True
                continue
            if time.monotonic() - waited_from > 3 * self.lease_s:
                return False
            await asyncio.sleep(min(0.5, self.lease_s / 4))

    async def heartbeat(self, update_ids: Collection[int]) -> None:
        params = {"ids": list(update_ids), "now": time.time()}
        await run_in_transaction(self._engine, lambda conn: conn.execute(self._refresh, params))

    async def complete(self, update_id: int) -> None:
        await self._done_batcher.submit(update_id)

    async def _complete_batch(self, update_ids: list[int]) -> list[None]:
        params = {"ids": list(dict.fromkeys(update_ids)), "now": time.time()}
        await run_in_transaction(self._engine, lambda conn: conn.execute(self._mark_done, params))
        return [None] * len(update_ids)

    async def record_done(self, update_id: int) -> None:
        """Done, for an update handled without a claim: one the polling journal had just stored as new (its
        journal row was the claim). The row is what a later replay of that update meets."""
        await self._recorded_batcher.submit(update_id)
        await self._maybe_sweep()

    async def _record_done_batch(self, update_ids: list[int]) -> list[None]:
        now = time.time()
        rows = [{"update_id": update_id, "status": DONE, "owner": self.owner, "claimed_at": now}
                for update_id in dict.fromkeys(update_ids)]
        await run_in_transaction(self._engine, lambda conn: conn.execute(self._record_done, rows))
        return [None] * len(update_ids)

    async def release(self, update_id: int) -> None:
        table = self._table
        async with self._engine.begin() as conn:
            await conn.execute(delete(table).where(table.c.update_id == update_id, table.c.owner == self.owner))

    async def seen(self, update_id: int) -> str | None:
        table = self._table
        async with self._engine.connect() as conn:
            return (await conn.execute(select(table.c.status).where(table.c.update_id == update_id))).scalar()

    async def sweep(self) -> int:
        table = self._table
        cutoff = time.time() - self.ttl_s
        async with self._engine.begin() as conn:
            result = await conn.execute(delete(table).where(table.c.claimed_at < cutoff, table.c.status == DONE))
        return int(result.rowcount or 0)

    async def _maybe_sweep(self) -> None:
        self._claims_since_sweep += 1
        if self._claims_since_sweep >= 1000:
            self._claims_since_sweep = 0
            await self.sweep()

    async def aclose(self) -> None:
        # completions queued by updates that already answered still land before the engine closes
        await self._claim_batcher.aclose()
        await self._done_batcher.aclose()
        await self._recorded_batcher.aclose()


class RedisUpdateClaims:
    """The same protocol on Redis: a short lease key while processing, a done key with the TTL."""

    def __init__(self, url: str, ttl_s: float, lease_s: float = 15.0, owner: str | None = None,
                 prefix: str = "anchorgpu:update") -> None:
        self._redis = fail_fast_redis(url)
        self.ttl_s = ttl_s
        self.lease_s = lease_s
        self.owner = owner or uuid.uuid4().hex
        self._prefix = prefix

    def _keys(self, update_id: int) -> tuple[str, str]:
        return f"{self._prefix}:{update_id}:lease", f"{self._prefix}:{update_id}:done"

    async def claim(self, update_id: int) -> bool:
        lease_key, done_key = self._keys(update_id)
        waited_from = time.monotonic()
        while True:
            if await self._redis.exists(done_key):
                return False
            if await self._redis.set(lease_key, self.owner, nx=True, px=int(self.lease_s * 1000)):
                # The owner may have finished between our done check and our SET (complete() writes done and
                # drops the lease atomically): re-check, or a redelivery racing the original answers twice.
                if await self._redis.exists(done_key):
                    await self._redis.delete(lease_key)
                    return False
                return True
            holder = await self._redis.get(lease_key)
            if holder is not None and (holder if isinstance(holder, str) else holder.decode()) == self.owner:
                return False
            if time.monotonic() - waited_from > 3 * self.lease_s:
                return False
            await asyncio.sleep(min(0.5, self.lease_s / 4))

    async def heartbeat(self, update_ids: Collection[int]) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            for update_id in update_ids:
                pipe.pexpire(self._keys(update_id)[0], int(self.lease_s * 1000))
            await pipe.execute()

    async def complete(self, update_id: int) -> None:
        lease_key, done_key = self._keys(update_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(done_key, self.owner, ex=int(self.ttl_s))
            pipe.delete(lease_key)
            await pipe.execute()

    async def release(self, update_id: int) -> None:
        lease_key, _ = self._keys(update_id)
        await self._redis.delete(lease_key)

    async def aclose(self) -> None:
        await self._redis.aclose()

    @property
    def client(self) -> object:
        return self._redis

    async def adopt(self, done: Collection[int], in_flight: Collection[int]) -> None:
        """Record updates claimed elsewhere (the SQL table during a Redis outage): finished ones as done,
        the ones still being handled as leases of ours, so that a redelivery to any replica is skipped."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for update_id in done:
                pipe.set(self._keys(update_id)[1], self.owner, ex=int(self.ttl_s))
            for update_id in in_flight:
                pipe.set(self._keys(update_id)[0], self.owner, nx=True, px=int(self.lease_s * 1000))
            await pipe.execute()


log = logging.getLogger(__name__)
RECENT_UPDATES = 10_000  # finished update ids this process remembers for the outage case below


class FailoverUpdateClaims:
    """Redis claims, and the SQL table while Redis cannot be reached: no update is dropped and none is
    handled twice across the outage.

    * Redis up: :class:`RedisUpdateClaims`, as without this class.
    * Redis down (a command failed; retried after ``Outage.retry_s``): the claim is taken in the app
      database (:class:`SqlUpdateClaims`, the table every deployment has), shared by every replica that
      cannot reach Redis either, so the outage answers each update once. This process also refuses an id it
      finished recently or is still handling under Redis (a redelivery across the switch).
    * Redis back: before its first claim there, this process writes what it claimed in SQL into Redis
      (done keys, or leases for updates still in flight) and the completions it could not write, so a
      redelivery of an update answered during the outage is skipped in Redis too.

    Left open (docs/operations.md, Redis outage): a partial outage where one replica loses Redis while another keeps it,
    and Telegram redelivers one update to both sides within that window; a Redis restarted without its AOF
    forgets the updates before the outage (their quotes and placements stay exactly-once by their keys).
    """

    def __init__(self, redis: RedisUpdateClaims, sql: SqlUpdateClaims, retry_s: float = 1.0) -> None:
        self.redis = redis
        self.sql = sql
        self.lease_s = redis.lease_s
        self.outage = Outage("update de-duplication", "claiming updates in the database", log, retry_s)
        self._in_flight: dict[int, set[str]] = {}  # update id -> the stores holding its claim
        self._to_adopt: dict[int, bool] = {}  # ids Redis must learn when it is back -> finished?
        self._recent: OrderedDict[int, None] = OrderedDict()
        self._adopting = asyncio.Lock()

    async def claim(self, update_id: int) -> bool:
        if update_id in self._in_flight:
            return False  # a duplicate of one this process is handling
        if not self.outage.skip():
            try:
                await self._adopt()
                claimed = await self.redis.claim(update_id)
            except REDIS_DOWN_ERRORS as exc:
                self.outage.failed(exc)
            else:
                self.outage.succeeded()
                if claimed:
                    self._in_flight[update_id] = {"redis"}
                return claimed
        if update_id in self._recent:
            return False
        claimed = await self.sql.claim(update_id)  # the database down too: the middleware's last resort
        if claimed:
            self._in_flight[update_id] = {"sql"}
            self._to_adopt[update_id] = False
        return claimed

    async def heartbeat(self, update_ids: Collection[int]) -> None:
        in_redis = [u for u in update_ids if "redis" in self._in_flight.get(u, ())]
        in_sql = [u for u in update_ids if "sql" in self._in_flight.get(u, ())]
        if in_sql:
            await self.sql.heartbeat(in_sql)
        if in_redis and not self.outage.skip():
            try:
                await self.redis.heartbeat(in_redis)
            except REDIS_DOWN_ERRORS as exc:
                self.outage.failed(exc)

    async def complete(self, update_id: int) -> None:
        stores = self._in_flight.pop(update_id, set())
        self._remember(update_id)
        if update_id in self._to_adopt:
            self._to_adopt[update_id] = True  # Redis learns it as done when it is back
        if "redis" in stores:
            try:
                await self.redis.complete(update_id)
            except REDIS_DOWN_ERRORS as exc:
                self.outage.failed(exc)
                self._to_adopt[update_id] = True  # its lease would expire and let a redelivery through
        if "sql" in stores:
            await self.sql.complete(update_id)

    async def release(self, update_id: int) -> None:
        stores = self._in_flight.pop(update_id, set())
        self._to_adopt.pop(update_id, None)
        if "redis" in stores:
            try:
                await self.redis.release(update_id)
            except REDIS_DOWN_ERRORS as exc:  # the lease expires by itself
                self.outage.failed(exc)
        if "sql" in stores:
            await self.sql.release(update_id)

    async def _adopt(self) -> None:
        if not self._to_adopt:
            return
        async with self._adopting:
            pending = dict(self._to_adopt)
            if not pending:
                return
            await self.redis.adopt([u for u, done in pending.items() if done],
                                   [u for u, done in pending.items() if not done])
            for update_id, done in pending.items():
                if self._to_adopt.get(update_id) == done:
                    del self._to_adopt[update_id]
                if not done and update_id in self._in_flight:
                    self._in_flight[update_id].add("redis")  # its completion now goes to both stores
            log.info("update de-duplication: %d updates claimed during the Redis outage recorded in Redis",
                     len(pending))

    def _remember(self, update_id: int) -> None:
        self._recent[update_id] = None
        self._recent.move_to_end(update_id)
        if len(self._recent) > RECENT_UPDATES:
            self._recent.popitem(last=False)

    async def aclose(self) -> None:
        await self.redis.aclose()
        await self.sql.aclose()
