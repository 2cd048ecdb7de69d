"""Per-user and per-chat token buckets with a friendly "please wait" (sent once per wait, not per message)."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiogram import BaseMiddleware
from aiogram.enums import ChatType
from aiogram.types import CallbackQuery, Chat, InlineQuery, Message, TelegramObject, User

from bot import metrics
from bot.filters import thread_of
from infra.i18n import Lang, pick_lang, t


@dataclass
class _Bucket:
    tokens: float
    updated: float
    warned_until: float = 0.0


class TokenBucket:
    """``rate_per_minute`` sustained, bursts up to ``capacity``; keys idle for long are forgotten."""

    def __init__(self, rate_per_minute: int, capacity: int | None = None) -> None:
        self.rate = rate_per_minute / 60.0
        self.capacity = float(capacity if capacity is not None else max(3, rate_per_minute // 4))
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


class TokenBuckets:
    def __init__(self, user_per_minute: int, chat_per_minute: int) -> None:
        self.user = TokenBucket(user_per_minute)
        self.chat = TokenBucket(chat_per_minute)


class RateLimitMiddleware(BaseMiddleware):
    def __init__(self, buckets: TokenBuckets) -> None:
        self.buckets = buckets

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        user: User | None = data.get("event_from_user")
        chat: Chat | None = data.get("event_chat")
        wait = 0.0
        bucket = self.buckets.user
        key = user.id if user else 0
        if user is not None:
            wait = self.buckets.user.take(user.id)
        if not wait and chat is not None and chat.type != ChatType.PRIVATE:
            wait = self.buckets.chat.take(chat.id)
            bucket, key = self.buckets.chat, chat.id
        if not wait:
            return await handler(event, data)
        metrics.RATE_LIMITED.labels("user" if bucket is self.buckets.user else "chat").inc()
        if bucket.should_warn(key, wait):
            lang: Lang = data.get("lang") or pick_lang(user.language_code if user else None)
            text = t("rate_limited", lang, seconds=max(1, math.ceil(wait)))
            if isinstance(event, Message):
                await event.bot.send_message(event.chat.id, text, message_thread_id=thread_of(event),  # type: ignore[union-attr]
                                             parse_mode=None)
            elif isinstance(event, CallbackQuery):
                await event.answer(text, show_alert=True)
            elif isinstance(event, InlineQuery):
                await event.answer([], cache_time=1, is_personal=True)
        return None
