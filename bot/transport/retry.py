"""The one retry policy for Bot API calls, so that a reply is not lost to a hiccup — and not tried forever.

Telegram answers 5xx or drops a connection now and then, and 429 (flood control) carries ``retry_after``;
aiogram raises at once and does not retry. Without this, a /quote whose reply hits one 502 ends in the
error boundary's apology even though the quote was stored. :class:`TransientErrorRetry`, a middleware of
the session (:func:`bot.transport.session.telegram_session`), is the only layer that retries: a call is
tried at most :attr:`RetryPolicy.attempts` times (4), whatever failed. Not retried:

* ``getUpdates`` (the polling loop, bot/delivery/polling.py, has its own back-off),
* previews (``sendMessageDraft``, ``sendChatAction``) and, for 429 only, ``editMessageText``: the streaming
  code paces those per chat and deliberately skips a preview under flood control; a *final* edit (the
  answer itself, made inside :func:`final_send`) waits the 429 out like a message,
* for 5xx and network errors, ``sendRichMessage``: its reply has an HTML form, sent at once instead.

A 429 asking for more than ``max_retry_after_s`` is raised at once, except for a final send (the answer
must arrive; the wait is what Telegram asked for).

A dropped connection may hide a message Telegram did send: the retry then duplicates a reply, never data
(quotes are idempotent). Losing the reply would be worse.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.exceptions import TelegramNetworkError, TelegramRetryAfter, TelegramServerError

from bot import metrics

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.methods import Response, TelegramMethod

log = logging.getLogger(__name__)
T = TypeVar("T")

NEVER = frozenset({"getUpdates", "sendMessageDraft", "sendChatAction"})
NOT_ON_FLOOD = frozenset({"editMessageText"})  # unless final: a preview skips a 429, the answer waits it out
# a reply with a plain form: a server error goes straight to that form (bot/output/rich.py), not through retries
NOT_ON_SERVER_ERROR = frozenset({"sendRichMessage"})

_final: ContextVar[bool] = ContextVar("final_send", default=False)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a failed Bot API call is tried again (the only such policy in the bot)."""

    attempts: int = 4  # tries in all, the first included
    max_retry_after_s: float = 30.0  # a longer 429 is raised at once (a final send waits it out)
    backoff_s: float = 0.5  # before the 2nd try after a 5xx or a network error; doubled each time
    max_backoff_s: float = 5.0

    def backoff(self, attempt: int) -> float:
        return min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)


async def final_send(call: Callable[[], Awaitable[T]]) -> T:
    """Make a call whose message must arrive (an answer, not a preview): the session's retry waits out a
    429 even for an edit and however long Telegram asks. It does not add tries: the policy's attempts hold."""
    token = _final.set(True)
    try:
        return await call()
    finally:
        _final.reset(token)


class TransientErrorRetry(BaseRequestMiddleware):
    def __init__(self, policy: RetryPolicy | None = None) -> None:
        self.policy = policy or RetryPolicy()

    async def __call__(self, make_request: NextRequestMiddlewareType[Any], bot: Bot,
                       method: TelegramMethod[Any]) -> Response[Any]:
        name = str(getattr(method, "__api_method__", type(method).__name__))
        if name in NEVER:
            return await make_request(bot, method)
        policy, final = self.policy, _final.get()
        for attempt in range(1, policy.attempts + 1):
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as exc:
                if name in NOT_ON_FLOOD and not final:
                    raise  # a preview: the streaming code backs off that chat (and counts it)
                metrics.RETRY_AFTER.labels(name).inc()
                if attempt == policy.attempts or (exc.retry_after > policy.max_retry_after_s and not final):
                    raise
                log.warning("%s: 429, retrying in %s s", name, exc.retry_after)
                await asyncio.sleep(exc.retry_after)
            except (TelegramServerError, TelegramNetworkError) as exc:
                if attempt == policy.attempts or name in NOT_ON_SERVER_ERROR:
                    raise
                delay = policy.backoff(attempt)
                log.warning("%s failed (%s), retry %s in %.1f s", name, type(exc).__name__, attempt, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")
