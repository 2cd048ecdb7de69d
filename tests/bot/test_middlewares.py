"""De-duplication claims (SQLite, PostgreSQL, Redis), token buckets and preferences."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.dedupe_store import RedisUpdateClaims, SqlUpdateClaims
from bot.middlewares.ratelimit import TokenBucket
from bot.preferences import PreferenceStore, scope_for
from infra.db import create_engine
from infra.migrate import migrate


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    await migrate(engine)
    yield engine
    await engine.dispose()


async def test_an_update_is_claimed_once_and_a_failed_one_can_be_retried(engine: AsyncEngine) -> None:
    claims = SqlUpdateClaims(engine, ttl_s=3600)
    assert await claims.claim(1)
    assert not await claims.claim(1), "in flight in this process"
    await claims.complete(1)
    assert not await claims.claim(1), "done"
    assert await claims.claim(2)
    await claims.release(2)  # processing failed: Telegram's redelivery must be processed
    assert await claims.claim(2)


async def test_concurrent_claims_of_one_update_admit_exactly_one(engine: AsyncEngine) -> None:
    replicas = [SqlUpdateClaims(engine, ttl_s=3600, lease_s=5) for _ in range(8)]
    results = await asyncio.gather(*(replica.claim(7) for replica in replicas[:1]))
    waiting = asyncio.gather(*(replica.claim(7) for replica in replicas[1:]))
    await asyncio.sleep(0.3)
    await replicas[0].complete(7)
    assert results == [True]
    assert await waiting == [False] * 7


async def test_a_dead_owner_lease_is_taken_over(engine: AsyncEngine) -> None:
    dead = SqlUpdateClaims(engine, ttl_s=3600, lease_s=0.3)
    assert await dead.claim(9)  # then the process is SIGKILLed: no heartbeat, no complete
    restarted = SqlUpdateClaims(engine, ttl_s=3600, lease_s=0.3)
    assert await restarted.claim(9)
    await restarted.complete(9)
    assert not await SqlUpdateClaims(engine, ttl_s=3600, lease_s=0.3).claim(9)


async def test_old_completed_claims_are_swept(engine: AsyncEngine) -> None:
    claims = SqlUpdateClaims(engine, ttl_s=0.01)
    assert await claims.claim(11)
    await claims.complete(11)
    await asyncio.sleep(0.05)
    assert await claims.sweep() == 1
    assert await claims.seen(11) is None


async def test_claims_on_both_engines(sql_engine: AsyncEngine) -> None:
    # a scratch schema on PostgreSQL: the public schema of the shared `test` database is nobody's to migrate
    engine = sql_engine
    await migrate(engine)
    update_id = uuid.uuid4().int % 2**53
    first, second = SqlUpdateClaims(engine, ttl_s=60), SqlUpdateClaims(engine, ttl_s=60)
    assert await first.claim(update_id)
    await first.complete(update_id)
    assert not await second.claim(update_id)
    await _one_batch_admits_each_update_once(engine)


async def _one_batch_admits_each_update_once(engine: AsyncEngine) -> None:
    claims = SqlUpdateClaims(engine, ttl_s=60)
    base = uuid.uuid4().int % 2**52
    ids = [base + n for n in (1, 2, 3, 2, 1)]  # a redelivered copy inside the same getUpdates batch
    results = await asyncio.gather(*(claims.claim(update_id) for update_id in ids))
    assert results == [True, True, True, False, False]
    await asyncio.gather(*(claims.complete(update_id) for update_id in set(ids)))
    assert {await claims.seen(update_id) for update_id in ids} == {"done"}
    await claims.heartbeat(ids)  # one call for them all; finished ones stay finished
    assert {await claims.seen(update_id) for update_id in ids} == {"done"}


async def test_a_copy_redelivered_in_the_same_batch_is_admitted_once(engine: AsyncEngine) -> None:
    await _one_batch_admits_each_update_once(engine)


@contextlib.contextmanager
def statements_on(table: str) -> Iterator[list[str]]:
    """The verb of every statement sent to any engine (the SQLite fast path's own engines too) naming `table`."""
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if table in statement:
            sent.append(statement.split(None, 1)[0].upper())

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(Engine, "before_cursor_execute", record)


async def test_claims_and_completions_of_one_loop_turn_share_a_statement(sql_engine: AsyncEngine) -> None:
    await migrate(sql_engine)
    claims = SqlUpdateClaims(sql_engine, ttl_s=60)
    base = uuid.uuid4().int % 2**52
    ids = [base + n for n in range(5)]  # five updates of one getUpdates batch, handled concurrently
    try:
        with statements_on("telegram_updates") as sent:
            assert await asyncio.gather(*(claims.claim(update_id) for update_id in ids)) == [True] * 5
        assert sent == ["INSERT"], f"five claims, one multi-row INSERT; sent {sent}"
        with statements_on("telegram_updates") as sent:
            await asyncio.gather(*(claims.complete(update_id) for update_id in ids))
        assert sent == ["UPDATE"], f"five completions, one UPDATE; sent {sent}"
        with statements_on("telegram_updates") as sent:
            await claims.heartbeat(ids)
        assert sent == ["UPDATE"], f"one heartbeat for all; sent {sent}"
        assert {await claims.seen(update_id) for update_id in ids} == {"done"}
    finally:
        await claims.aclose()


@pytest.mark.redis
async def test_claims_on_redis() -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    first = RedisUpdateClaims("redis://127.0.0.1:6379/0", ttl_s=60, lease_s=0.5, prefix=prefix)
    second = RedisUpdateClaims("redis://127.0.0.1:6379/0", ttl_s=60, lease_s=0.5, prefix=prefix)
    try:
        assert await first.claim(1)
        assert not await first.claim(1)
        assert await second.claim(1), "first never heartbeats: its lease expires and the copy takes over"
        await second.complete(1)
        assert not await first.claim(1)
    finally:
        await first.aclose()
        await second.aclose()


def test_token_bucket_allows_a_burst_then_paces() -> None:
    bucket = TokenBucket(rate_per_minute=60, capacity=3)
    assert [bucket.take(1, now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = bucket.take(1, now=0.0)
    assert wait == pytest.approx(1.0)
    assert bucket.should_warn(1, wait, now=0.0)
    assert not bucket.should_warn(1, wait, now=0.5), "one warning per wait"
    assert bucket.take(1, now=1.0) == 0.0
    assert bucket.take(2, now=0.0) == 0.0, "buckets are per key"


async def test_preferences_resolve_group_then_user_then_telegram(engine: AsyncEngine) -> None:
    store = PreferenceStore(engine)
    resolved = await store.resolve(user_id=1, chat_id=-5, is_private=False, language_code="en-US")
    assert (resolved.lang, resolved.answer_length, resolved.lang_explicit) == ("en", "normal", False)
    await store.set(scope_for("user", 1), 1, lang="ru")
    assert (await store.resolve(user_id=1, chat_id=1, is_private=True, language_code="en")).lang == "ru"
    await store.set(scope_for("chat", -5), -5, lang="en", answer_length="short")
    group = await store.resolve(user_id=1, chat_id=-5, is_private=False, language_code="ru")
    assert (group.lang, group.answer_length, group.lang_explicit) == ("en", "short", True)
    await store.set(scope_for("chat", -5), -5, lang=None)
    group = await store.resolve(user_id=1, chat_id=-5, is_private=False, language_code="en")
    assert (group.lang, group.answer_length) == ("ru", "short")
