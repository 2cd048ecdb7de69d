"""The shared idempotency-key machinery on its own table, for real on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable

import pytest
from sqlalchemy import BigInteger, Column, Connection, MetaData, String, Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from infra.db import run_in_transaction
from infra.idempotency import (
    MIN_RETENTION_HOURS,
    IdempotencyKeys,
    KeyTakenError,
    claim_or_replay,
    key_problem,
)

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)

metadata = MetaData()
THINGS = Table("idem_things", metadata, Column("id", String(32), primary_key=True))
KEYS = Table("idem_keys", metadata,
             Column("owner", String(128), primary_key=True), Column("key", String(128), primary_key=True),
             Column("fingerprint", String(64)), Column("thing_id", String(32)),
             Column("expires_at", BigInteger, index=True))


@pytest.fixture
async def keys(sql_engine: AsyncEngine) -> AsyncIterator[IdempotencyKeys]:
    async with sql_engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    yield IdempotencyKeys(sql_engine, KEYS, retention_hours=24, returning="thing_id")


async def count(engine: AsyncEngine, table: Table) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def lookup(keys: IdempotencyKeys, owner: str, key: str, now: dt.datetime) -> tuple[str, str] | None:
    async with keys.engine.connect() as conn:
        row = (await conn.execute(select(KEYS.c.fingerprint, KEYS.c.thing_id)
                                  .where(keys.live(owner, key, now)))).first()
    return None if row is None else (row[0], row[1])


def test_key_rule() -> None:
    assert key_problem("order-0001") is None
    assert key_problem("3f2b8c1e-5c1d-4c55-9a57-0d4f3d0f2e11") is None
    for bad in ("abc", "x" * 129, "has space", "ключ-1234", ""):
        problem = key_problem(bad)
        assert problem is not None and f"got {len(bad)} characters" in problem


def test_retention_below_the_minimum_is_refused(sql_engine: AsyncEngine) -> None:
    with pytest.raises(ValueError, match=str(MIN_RETENTION_HOURS)):
        IdempotencyKeys(sql_engine, KEYS, retention_hours=MIN_RETENTION_HOURS - 1, returning="thing_id")


async def test_the_first_claim_wins_and_a_second_rolls_its_transaction_back(keys: IdempotencyKeys) -> None:
    def write(thing_id: str, fingerprint: str) -> Callable[[Connection], None]:
        def work(conn: Connection) -> None:
            conn.execute(insert(THINGS), {"id": thing_id})
            keys.claim(conn, keys.row("u1", "order-0001", fingerprint, NOW, thing_id=thing_id))
        return work

    await run_in_transaction(keys.engine, write("T1", "fp-a"))
    with pytest.raises(KeyTakenError):
        await run_in_transaction(keys.engine, write("T2", "fp-b"))
    assert await count(keys.engine, THINGS) == 1  # the loser's row went with its transaction
    assert await lookup(keys, "u1", "order-0001", NOW) == ("fp-a", "T1")
    assert await lookup(keys, "u2", "order-0001", NOW) is None  # keys are scoped to their owner


async def test_claim_many_returns_the_rows_that_got_their_key(keys: IdempotencyKeys) -> None:
    rows = [keys.row("u1", "k-0001", "a", NOW, thing_id="T1"), keys.row("u2", "k-0001", "a", NOW, thing_id="T2")]
    assert await run_in_transaction(keys.engine, lambda conn: keys.claim_many(conn, rows)) == {"T1", "T2"}
    again = [keys.row("u1", "k-0001", "b", NOW, thing_id="T3"), keys.row("u1", "k-0002", "b", NOW, thing_id="T4")]
    assert await run_in_transaction(keys.engine, lambda conn: keys.claim_many(conn, again)) == {"T4"}
    assert await run_in_transaction(keys.engine, lambda conn: keys.claim_many(conn, [])) == set()


async def test_keys_expire_after_retention(keys: IdempotencyKeys) -> None:
    rows = [keys.row("u1", "k-0001", "a", NOW, thing_id="T1"),
            keys.row("u1", "k-0002", "a", NOW + dt.timedelta(hours=12), thing_id="T2")]
    assert rows[0]["expires_at"] == int((NOW + dt.timedelta(hours=24)).timestamp())
    await run_in_transaction(keys.engine, lambda conn: keys.claim_many(conn, rows))
    later = NOW + dt.timedelta(hours=25)
    assert await lookup(keys, "u1", "k-0001", NOW + dt.timedelta(hours=23)) is not None
    assert await lookup(keys, "u1", "k-0001", later) is None  # past retention: invisible
    await keys.drop_stale("u1", "k-0002", later)  # still live: kept
    await keys.drop_stale("u1", "k-0001", later)
    assert await count(keys.engine, KEYS) == 1
    assert await keys.purge_expired(NOW + dt.timedelta(days=3)) == 1
    assert await count(keys.engine, KEYS) == 0


async def test_claim_or_replay_writes_replays_and_retries_once_after_a_stale_key() -> None:
    calls: list[str] = []
    holder: dict[str, str | None] = {"record": None}

    async def attempt_ok() -> str:
        calls.append("attempt")
        return "written"

    async def attempt_taken() -> str:
        calls.append("attempt")
        raise KeyTakenError

    async def find() -> str | None:
        calls.append("find")
        return holder["record"]

    async def drop_stale() -> None:
        calls.append("drop")

    def replay(record: str) -> str:
        return "replay of " + record

    assert await claim_or_replay(attempt_ok, key="k-0001", find=find, replay=replay, drop_stale=drop_stale) \
        == "written"
    assert calls == ["attempt"]

    calls.clear()
    holder["record"] = "T1"
    assert await claim_or_replay(attempt_taken, key="k-0001", find=find, replay=replay,
                                 drop_stale=drop_stale) == "replay of T1"
    assert calls == ["attempt", "find"]

    calls.clear()
    holder["record"] = None  # the holder expired but was not purged: dropped, then one more try
    with pytest.raises(RuntimeError, match="k-0001"):
        await claim_or_replay(attempt_taken, key="k-0001", find=find, replay=replay, drop_stale=drop_stale)
    assert calls == ["attempt", "find", "drop", "attempt", "find"]

    with pytest.raises(KeyTakenError):  # without a key there is nothing to replay
        await claim_or_replay(attempt_taken, key=None, find=find, replay=replay, drop_stale=drop_stale)


async def test_concurrent_claims_of_one_key_let_exactly_one_through(keys: IdempotencyKeys) -> None:
    async def one(i: int) -> str:
        def work(conn: Connection) -> str:
            conn.execute(insert(THINGS), {"id": f"T{i}"})
            keys.claim(conn, keys.row("u1", "same-key", f"fp-{i % 3}", NOW, thing_id=f"T{i}"))
            return f"T{i}"

        async def find() -> tuple[str, str] | None:
            return await lookup(keys, "u1", "same-key", NOW)

        async def drop() -> None:
            await keys.drop_stale("u1", "same-key", NOW)

        return await claim_or_replay(lambda: run_in_transaction(keys.engine, work), key="same-key", find=find,
                                     replay=lambda found: found[1], drop_stale=drop)

    winners = set(await asyncio.gather(*(one(i) for i in range(20))))
    assert len(winners) == 1
    assert await count(keys.engine, THINGS) == 1
