"""Rate limits shared by replicas through Redis (one limit for N bot processes), and the fallbacks."""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram.types import Chat, TelegramObject, User
from redis.asyncio import Redis

from bot.middlewares.ratelimit import RateLimitMiddleware, RedisTokenBuckets, TokenBuckets, build_rate_limits
from infra.settings import DBSettings, Settings, TelegramSettings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
async def replicas() -> AsyncIterator[tuple[RedisTokenBuckets, RedisTokenBuckets]]:
    """Two replicas' buckets on one Redis: 6 per minute (a burst of 3) per user, per chat too."""
    prefix = f"test:ratelimit:{uuid.uuid4().hex}"
    first = RedisTokenBuckets(REDIS_URL, 6, 6, prefix=prefix)
    second = RedisTokenBuckets(REDIS_URL, 6, 6, prefix=prefix)
    yield first, second
    cleanup = Redis.from_url(REDIS_URL)
    keys = [key async for key in cleanup.scan_iter(f"{prefix}:*")]
    if keys:
        await cleanup.delete(*keys)
    await cleanup.aclose()
    await first.aclose()
    await second.aclose()


@pytest.mark.redis
async def test_two_replicas_enforce_one_user_limit(replicas: tuple[RedisTokenBuckets, RedisTokenBuckets]) -> None:
    first, second = replicas
    verdicts = [await (first if n % 2 else second).take(7, None) for n in range(5)]
    assert [v.allowed for v in verdicts] == [True, True, True, False, False], "the burst of 3 is shared"
    refused = verdicts[3]
    assert refused.scope == "user" and 9.0 < refused.wait_s <= 10.0  # 6/min: a token every 10 s
    assert [v.warn for v in verdicts[3:]] == [True, False], "one warning per wait, whichever replica refuses"
    assert (await first.take(8, None)).allowed, "buckets are per user"
    redis = Redis.from_url(REDIS_URL)
    ttl = await redis.pttl(f"{first.prefix}:user:7")
    await redis.aclose()
    assert 0 < ttl <= 31_000, "the key expires once the bucket would be full again"


@pytest.mark.redis
async def test_two_replicas_enforce_one_group_limit(replicas: tuple[RedisTokenBuckets, RedisTokenBuckets]) -> None:
    first, second = replicas
    # four different users in one group: each user is within their own limit, the chat is not
    verdicts = [await (first, second)[n % 2].take(100 + n, -500) for n in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert verdicts[3].scope == "chat" and verdicts[3].warn


@pytest.mark.redis
async def test_concurrent_takes_on_two_replicas_admit_exactly_the_burst(
        replicas: tuple[RedisTokenBuckets, RedisTokenBuckets]) -> None:
    first, second = replicas
    verdicts = await asyncio.gather(*((first, second)[n % 2].take(9, None) for n in range(20)))
    assert sum(v.allowed for v in verdicts) == 3
    assert sum(v.warn for v in verdicts) == 1


class _Event(TelegramObject):
    """An update kind the middleware answers nothing to: only whether the handler ran counts here."""


@pytest.mark.redis
async def test_the_middleware_of_two_replicas_serves_one_limit(
        replicas: tuple[RedisTokenBuckets, RedisTokenBuckets]) -> None:
    middlewares = [RateLimitMiddleware(replica) for replica in replicas]
    served: list[int] = []

    async def handler(event: TelegramObject, data: dict[str, Any]) -> str:
        served.append(data["event_from_user"].id)
        return "served"

    user = User(id=42, is_bot=False, first_name="Ann")
    chat = Chat(id=42, type="private")
    results = [await middlewares[n % 2](handler, _Event(), {"event_from_user": user, "event_chat": chat})
               for n in range(6)]
    assert results == ["served"] * 3 + [None] * 3 and served == [42, 42, 42]


async def test_redis_down_fails_open_with_this_replicas_own_limit(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there
    limits = RedisTokenBuckets(f"redis://127.0.0.1:{port}/0", 6, 6, prefix="unused")
    try:
        with caplog.at_level(logging.WARNING, logger="bot.middlewares.ratelimit"):
            verdicts = [await limits.take(1, None) for _ in range(5)]
        assert [v.allowed for v in verdicts] == [True, True, True, False, False]
        warnings = [r.getMessage() for r in caplog.records if "Redis unavailable" in r.getMessage()]
        assert len(warnings) == 1, "logged once per outage, not per update"
    finally:
        await limits.aclose()


async def test_without_redis_each_process_keeps_its_own_buckets() -> None:
    settings = Settings(db=DBSettings(redis_url=None),
                        telegram=TelegramSettings(rate_limit_per_minute=6, chat_rate_limit_per_minute=6))
    first, second = build_rate_limits(settings), build_rate_limits(settings)
    assert isinstance(first, TokenBuckets) and isinstance(second, TokenBuckets)
    assert [(await first.take(1, None)).allowed for _ in range(4)] == [True, True, True, False]
    assert (await second.take(1, None)).allowed, "in-process buckets are per replica"
    refused = await first.take(1, None)
    assert refused.scope == "user" and not refused.warn, "already warned for this wait"


async def test_with_redis_the_buckets_are_shared() -> None:
    limits = build_rate_limits(Settings(db=DBSettings(redis_url=REDIS_URL)))
    assert isinstance(limits, RedisTokenBuckets)
    await limits.aclose()
