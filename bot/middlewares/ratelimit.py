"""Per-user and per-chat token buckets with a friendly "please wait" (sent once per wait, not per message).

Two stores behind one interface (`RateLimits.take(user_id, chat_id) -> Verdict`):

* `TokenBuckets` — in this process (no Redis): each replica enforces its own limit.
* `RedisTokenBuckets` — with DB_REDIS_URL: the buckets live in Redis, so N replicas enforce one limit.
  A small Lua script refills and takes from the user's and then the chat's bucket atomically, on Redis's
  clock (replicas' clocks never disagree), and also decides the once-per-wait warning, so a flood
  spread over replicas is warned once: one round trip per update. A Lua script rather than the `limits`
  library because `limits` offers fixed/moving windows, not this token bucket (burst `capacity`, then
  `rate` per second, and the exact seconds to wait that the warning quotes), and would need one call
  per bucket. Keys expire once the bucket would be full again, so idle users cost Redis nothing.

  Redis down or slow (a 0.25 s timeout): the limit *fails open* — the update is served, the failure is
  logged (once per outage), and for `REDIS_RETRY_S` this replica falls back to its in-process buckets
  (a per-replica limit instead of none, and no timeout paid on every update) before trying Redis again.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from aiogram import BaseMiddleware
from aiogram.enums import ChatType
from aiogram.types import (
    CallbackQuery,
    Chat,
    InlineQuery,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    TelegramObject,
    User,
)

from bot import metrics
from bot.output.notices import Notices
from infra.i18n import Lang, pick_lang, t
from infra.redis_conn import fail_fast_redis
from infra.settings import Settings

log = logging.getLogger(__name__)
REDIS_TIMEOUT_S = 0.25
REDIS_RETRY_S = 5.0


@dataclass
class _Bucket:
    tokens: float
    updated: float
    warned_until: float = 0.0


def default_capacity(rate_per_minute: int) -> int:
    return max(3, rate_per_minute // 4)


class TokenBucket:
    """``rate_per_minute`` sustained, bursts up to ``capacity``; keys idle for long are forgotten."""

    def __init__(self, rate_per_minute: int, capacity: int | None = None) -> None:
        self.rate = rate_per_minute / 60.0
        self.capacity = float(capacity if capacity is not None else default_capacity(rate_per_minute))
        self._buckets: dict[int, _Bucket] = {}

    def take(self, key: int, now: float | None = None) -> float:
        """0.0 when allowed, otherwise the seconds until a token is available."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) > 50_000:
                self._forget_idle(now)
            bucket = self._buckets[key] = _Bucket(tokens=self.capacity, updated=now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def should_warn(self, key: int, wait_s: float, now: float | None = None) -> bool:
        """Warn once per waiting period so the warning itself cannot become a flood."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets[key]
        if now < bucket.warned_until:
            return False
        bucket.warned_until = now + wait_s
        return True

    def _forget_idle(self, now: float) -> None:
        full_after = self.capacity / self.rate
        self._buckets = {k: b for k, b in self._buckets.items() if now - b.updated < full_after}


@dataclass(frozen=True)
class Verdict:
    wait_s: float  # 0.0: allowed
    scope: str = ""  # "user" or "chat": the bucket that said no
    warn: bool = False  # the first refusal of this waiting period: tell the user

    @property
    def allowed(self) -> bool:
        return self.wait_s <= 0.0


ALLOWED = Verdict(0.0)


class RateLimits(Protocol):
    async def take(self, user_id: int | None, chat_id: int | None) -> Verdict:
        """The user's bucket first, then (only when the user may go on) the group chat's."""
        ...

    async def aclose(self) -> None: ...


class TokenBuckets:
    """In-process buckets: one limit per replica."""

    def __init__(self, user_per_minute: int, chat_per_minute: int) -> None:
        self.user = TokenBucket(user_per_minute)
        self.chat = TokenBucket(chat_per_minute)

    async def take(self, user_id: int | None, chat_id: int | None) -> Verdict:
        return self.take_now(user_id, chat_id)

    def take_now(self, user_id: int | None, chat_id: int | None) -> Verdict:
        for scope, bucket, key in (("user", self.user, user_id), ("chat", self.chat, chat_id)):
            if key is None:
                continue
            wait = bucket.take(key)
            if wait:
                return Verdict(wait, scope, bucket.should_warn(key, wait))
        return ALLOWED

    async def aclose(self) -> None:
        return None


# KEYS: the buckets in order (user, then chat); ARGV: rate per second and capacity of each, in order.
# Returns {index of the bucket that refused (0: none), seconds to wait (a string: Lua numbers are
# truncated to integers on the way out), 1 when this refusal should warn}.
_TAKE_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i - 1])
  local capacity = tonumber(ARGV[2 * i])
  local stored = redis.call('HMGET', key, 'tokens', 'updated', 'warned')
  local tokens = tonumber(stored[1]) or capacity
  local updated = tonumber(stored[2]) or now
  local warned = tonumber(stored[3]) or 0
  tokens = math.min(capacity, tokens + math.max(0, now - updated) * rate)
  local wait = 0
  local warn = 0
  if tokens >= 1 then
    tokens = tokens - 1
  else
    wait = (1 - tokens) / rate
    if now >= warned then
      warned = now + wait
      warn = 1
    end
  end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'updated', tostring(now), 'warned', tostring(warned))
  local keep = math.max((capacity - tokens) / rate, warned - now)
  redis.call('PEXPIRE', key, math.ceil(keep * 1000) + 1000)
  if wait > 0 then
    return {i, tostring(wait), warn}
  end
end
return {0, '0', 0}
"""


class RedisTokenBuckets:
    """The same buckets in Redis, shared by every replica (see the module docstring)."""

    def __init__(self, url: str, user_per_minute: int, chat_per_minute: int,
                 prefix: str = "anchorgpu:ratelimit", timeout_s: float = REDIS_TIMEOUT_S,
                 retry_s: float = REDIS_RETRY_S) -> None:
        self._redis = fail_fast_redis(url, timeout_s=timeout_s, connect_timeout_s=timeout_s)
        self._script = self._redis.register_script(_TAKE_SCRIPT)
        self._limits = {"user": (user_per_minute / 60.0, default_capacity(user_per_minute)),
                        "chat": (chat_per_minute / 60.0, default_capacity(chat_per_minute))}
        self.prefix = prefix
        self.retry_s = retry_s
        self.fallback = TokenBuckets(user_per_minute, chat_per_minute)
        self._down_until = 0.0
        self._failing = False

    async def take(self, user_id: int | None, chat_id: int | None) -> Verdict:
        if time.monotonic() < self._down_until:
            return self.fallback.take_now(user_id, chat_id)
        scopes = [(scope, key) for scope, key in (("user", user_id), ("chat", chat_id)) if key is not None]
        if not scopes:
            return ALLOWED
        keys = [f"{self.prefix}:{scope}:{key}" for scope, key in scopes]
        args = [str(value) for scope, _ in scopes for value in self._limits[scope]]
        from redis.exceptions import RedisError

        try:
            refused, wait, warn = await self._script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            self._down_until = time.monotonic() + self.retry_s
            if not self._failing:
                self._failing = True
                log.warning("rate limits: Redis unavailable (%s); serving with this replica's own limits "
                            "until it is back", exc)
            return self.fallback.take_now(user_id, chat_id)
        if self._failing:
            self._failing = False
            log.warning("rate limits: Redis is back; limits are shared by the replicas again")
        if not int(refused):
            return ALLOWED
        return Verdict(float(wait), scopes[int(refused) - 1][0], bool(int(warn)))

    async def aclose(self) -> None:
        await self._redis.aclose()


def build_rate_limits(settings: Settings) -> RateLimits:
    telegram = settings.telegram
    if settings.db.redis_url:
        return RedisTokenBuckets(settings.db.redis_url, telegram.rate_limit_per_minute,
                                 telegram.chat_rate_limit_per_minute)
    return TokenBuckets(telegram.rate_limit_per_minute, telegram.chat_rate_limit_per_minute)


class RateLimitMiddleware(BaseMiddleware):
    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        user: User | None = data.get("event_from_user")
        chat: Chat | None = data.get("event_chat")
        group = chat.id if chat is not None and chat.type != ChatType.PRIVATE else None
        verdict = await self.limits.take(user.id if user else None, group)
        if verdict.allowed:
            return await handler(event, data)
        metrics.RATE_LIMITED.labels(verdict.scope).inc()
        if verdict.warn:
            lang: Lang = data.get("lang") or pick_lang(user.language_code if user else None)
            text = t("rate_limited", lang, seconds=max(1, math.ceil(verdict.wait_s)))
            # in a group the warning is for the flooder only: ephemeral where Telegram allows (bot.output.notices)
            notices: Notices = data.get("notices") or Notices()
            if isinstance(event, Message) and event.guest_query_id:  # a guest may answer only its query
                await event.bot.answer_guest_query(  # type: ignore[union-attr]
                    guest_query_id=event.guest_query_id,
                    result=InlineQueryResultArticle(id="rate-limited", title=text,
                                                    input_message_content=InputTextMessageContent(
                                                        message_text=text, parse_mode=None)))
            elif isinstance(event, Message):
                await notices.to_sender(event, text)
            elif isinstance(event, CallbackQuery):
                await notices.to_presser(event, text)
            elif isinstance(event, InlineQuery):
                await event.answer([], cache_time=1, is_personal=True)
        return None
