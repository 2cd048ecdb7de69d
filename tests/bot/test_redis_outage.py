"""Redis goes away and comes back under the bot's Redis users: update claims, the FSM, conversation history,
and /healthz. A private redis-server (tests/faults/saboteurs.py) is SIGKILLed and started again on the
same port, empty, as a Redis restarted without its AOF would be; nothing is restarted on our side.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiogram.fsm.storage.base import StorageKey
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web import Application
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from app.services import Services
from bot.delivery.dedupe_store import FailoverUpdateClaims, RedisUpdateClaims, SqlUpdateClaims
from bot.fsm_storage import FSM_UNAVAILABLE, FailSoftStorage, FSMUnavailableError, build_fsm_storage
from bot.health import HealthChecks, add_health_routes
from bot.routers.quote import QuoteFlow
from infra.db import create_engine
from infra.migrate import migrate
from infra.settings import DataSettings, DBSettings, Settings
from rag.answering.conversation import RedisConversationStore
from tests.faults.saboteurs import REDIS_SERVER, PrivateRedis

pytestmark = pytest.mark.skipif(not Path(REDIS_SERVER).exists(), reason="needs /usr/bin/redis-server")
RETRY_S = 0.05  # how long a user of Redis skips it after a failure (1 s in production)


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
    await migrate(engine)
    yield engine
    await engine.dispose()


def replica(redis_server: PrivateRedis, engine: AsyncEngine, lease_s: float = 15.0) -> FailoverUpdateClaims:
    return FailoverUpdateClaims(RedisUpdateClaims(redis_server.url, ttl_s=600, lease_s=lease_s),
                                SqlUpdateClaims(engine, ttl_s=600, lease_s=lease_s), retry_s=RETRY_S)


async def test_claims_fail_over_to_the_database_and_hand_back_to_redis(
        redis_server: PrivateRedis, engine: AsyncEngine, caplog: pytest.LogCaptureFixture) -> None:
    first, second = replica(redis_server, engine), replica(redis_server, engine)
    try:
        assert await first.claim(1)
        await first.complete(1)

        redis_server.kill()
        with caplog.at_level(logging.WARNING, logger="bot.delivery.dedupe_store"):
            assert await first.claim(2)  # not lost: claimed in the database
            assert not await first.claim(2)  # …and in flight here
            # another replica without Redis sees the database's claim and waits for its outcome
            duplicate = asyncio.create_task(second.claim(2))
            await asyncio.sleep(0.3)
            assert not duplicate.done()
            await first.complete(2)
            assert await asyncio.wait_for(duplicate, 10) is False
            assert not await second.claim(2)  # a redelivery during the outage: answered already
            assert not await first.claim(1)  # an update finished before the outage, redelivered during it
            assert await first.claim(3)  # still in flight when Redis returns
            assert await second.claim(4)
            await second.complete(4)
            await asyncio.sleep(0.1)
        outage_logs = [r.getMessage() for r in caplog.records if "Redis unavailable" in r.getMessage()]
        assert len(outage_logs) == 2, outage_logs  # one line per replica and outage, not one per update

        redis_server.start()  # same port, empty: no restart of the claims objects
        await asyncio.sleep(RETRY_S * 2)
        assert await first.claim(5)  # Redis again; first it learned 2 (done) and 3 (in flight) ...
        assert await first.redis.client.exists("anchorgpu:update:5:lease")  # type: ignore[attr-defined]
        assert not await second.claim(2)  # ... so a redelivery to any replica is skipped in Redis
        assert await second.claim(6)
        waiting = asyncio.create_task(second.claim(3))  # a duplicate of one in flight waits for its outcome
        await asyncio.sleep(0.3)
        assert not waiting.done()
        await first.complete(3)
        assert await asyncio.wait_for(waiting, 10) is False
        assert not await first.claim(4)  # second's outage claim was handed to Redis when it came back
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_completion_redis_missed_is_written_when_it_returns(redis_server: PrivateRedis,
                                                                    engine: AsyncEngine) -> None:
    claims, other = replica(redis_server, engine, lease_s=1.0), replica(redis_server, engine, lease_s=1.0)
    try:
        assert await claims.claim(10)  # in Redis
        redis_server.kill()
        await claims.complete(10)  # Redis is gone: remembered for later
        redis_server.start()
        await asyncio.sleep(RETRY_S * 2)
        assert await claims.claim(11)
        assert not await other.claim(10)  # the done key was written when Redis came back
    finally:
        await claims.aclose()
        await other.aclose()


def fsm_key() -> StorageKey:
    return StorageKey(bot_id=42, chat_id=5, user_id=7)


async def test_fsm_reads_degrade_and_writes_say_unavailable(redis_server: PrivateRedis, tmp_path: Path) -> None:
    settings = Settings(db=DBSettings(url=f"sqlite:///{tmp_path / 'x.db'}", redis_url=redis_server.url))
    storage = build_fsm_storage(settings, create_engine(settings.db.url))
    assert isinstance(storage, FailSoftStorage)
    storage.outage.retry_s = RETRY_S
    try:
        await storage.set_state(fsm_key(), QuoteFlow.count)
        assert await storage.get_state(fsm_key()) == QuoteFlow.count.state

        redis_server.kill()
        assert await storage.get_state(fsm_key()) == FSM_UNAVAILABLE  # the update is still handled
        with pytest.raises(FSMUnavailableError):
            await storage.set_state(fsm_key(), QuoteFlow.duration)
        with pytest.raises(FSMUnavailableError):
            await storage.get_data(fsm_key())
        with pytest.raises(FSMUnavailableError):
            await storage.update_data(fsm_key(), {"count": 8})

        redis_server.start()
        await asyncio.sleep(RETRY_S * 2)
        assert await storage.get_state(fsm_key()) is None  # an empty Redis: the flow starts again
        await storage.set_state(fsm_key(), QuoteFlow.gpu)
        await storage.update_data(fsm_key(), {"msg_id": 3})
        assert await storage.get_state(fsm_key()) == QuoteFlow.gpu.state
        assert await storage.get_data(fsm_key()) == {"msg_id": 3}
        assert not storage.outage.down
    finally:
        await storage.close()


async def test_history_is_skipped_while_redis_is_down(redis_server: PrivateRedis,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    store = RedisConversationStore(redis_server.url, max_tokens=500)
    store.outage.retry_s = RETRY_S
    key = "outage-test:1"
    try:
        await store.append(key, "what is HBM?", "stacked memory")
        assert [turn.text for turn in await store.history(key)] == ["what is HBM?", "stacked memory"]
        redis_server.kill()
        with caplog.at_level(logging.WARNING, logger="rag.answering.conversation"):
            assert await store.history(key) == []  # the question is answered without context
            await store.append(key, "and HBM3?", "newer")  # not kept, not raised
            await asyncio.sleep(RETRY_S * 2)
            assert await store.history(key) == []
        assert sum("Redis unavailable" in r.getMessage() for r in caplog.records) == 1
        redis_server.start()
        await asyncio.sleep(RETRY_S * 2)
        await store.append(key, "what is NVLink?", "a GPU interconnect")
        assert [turn.text for turn in await store.history(key)] == ["what is NVLink?", "a GPU interconnect"]
    finally:
        await store.aclose()


# ---- /healthz ----------------------------------------------------------------------------------------
def services_for(tmp_path: Path, db_url: str, redis_url: str | None) -> Services:
    settings = Settings(data=DataSettings(state_dir=tmp_path / "state"), db=DBSettings(url=db_url, redis_url=redis_url))
    services = Services.create(settings)
    # index() asks only whether a retriever was built; building the real one (the embedder) is not what
    # these tests are about, and e2e/test_telegram_webhook.py checks /healthz with the real one
    services.retriever = object()  # type: ignore[assignment]
    return services


async def healthz(checks: HealthChecks) -> tuple[int, dict[str, object]]:
    app = Application()
    add_health_routes(app, checks)
    async with TestClient(TestServer(app)) as client:
        response = await client.get("/healthz")
        return response.status, await response.json()


async def test_healthz_names_redis_when_it_is_down_and_stays_ready(redis_server: PrivateRedis,
                                                                    tmp_path: Path) -> None:
    services = services_for(tmp_path, f"sqlite:///{tmp_path / 'app.db'}", redis_server.url)
    checks = HealthChecks(services)
    try:
        status, body = await healthz(checks)
        assert status == 200 and body["redis"] is True and body["database"] is True, body
        assert body["down"] == ["model"] and body["status"] == "degraded"  # no model loaded in this test

        redis_server.kill()
        status, body = await healthz(checks)
        # degraded, not down: the replica still serves, and a 503 from every replica (Redis is shared)
        # would take them all out of the load balancer
        assert status == 200 and body["status"] == "degraded", body
        assert body["down"] == ["redis", "model"] and body["redis"] is False and body["database"] is True

        redis_server.start()
        status, body = await healthz(checks)
        assert status == 200 and body["redis"] is True and "redis" not in body["down"], body  # type: ignore[operator]
    finally:
        await services.aclose()


async def test_healthz_without_redis_or_database(tmp_path: Path) -> None:
    unreachable = "postgresql://postgres@127.0.0.1:1/test"  # nothing listens on port 1
    services = services_for(tmp_path, unreachable, None)
    try:
        status, body = await healthz(HealthChecks(services))
    finally:
        await services.aclose()
    assert status == 503 and body["status"] == "down", body
    assert body["down"] == ["database", "model"] and body["redis"] is None and body["database"] is False


async def test_healthz_with_everything_up(redis_server: PrivateRedis, tmp_path: Path) -> None:
    client = Redis.from_url(redis_server.url)
    assert await client.ping()
    await client.aclose()
    services = services_for(tmp_path, f"sqlite:///{tmp_path / 'app.db'}", redis_server.url)
    checks = HealthChecks(services)
    checks.model = lambda: True  # type: ignore[method-assign]
    try:
        status, body = await healthz(checks)
    finally:
        await services.aclose()
    assert (status, body) == (200, {"status": "ok", "down": [], "model_loaded": True, "index_ready": True,
                                    "database": True, "redis": True})
