"""Retry Bot API calls that failed for transient reasons, so that a reply is not lost to a hiccup.

Telegram answers 5xx or drops a connection now and then, and 429 (flood control) carries ``retry_after``;
aiogram raises at once and does not retry. Without this, a /quote whose reply hits one 502 ends in the
error boundary's apology even though the quote was stored. Retried here, for every method except:

* ``getUpdates`` (the polling loop, bot/delivery/polling.py, has its own back-off),
* previews (``sendMessageDraft``, ``sendChatAction``) and, for 429 only, ``editMessageText``: the streaming
  code paces those per chat and deliberately skips a preview under flood control;
* for 5xx and network errors, ``sendRichMessage``: its reply has an HTML form, sent at once instead.

A dropped connection may hide a message Telegram did send: the retry then duplicates a reply, never data
(quotes are idempotent). Losing the reply would be worse.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.exceptions import TelegramNetworkError, TelegramRetryAfter, TelegramServerError

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.methods import Response, TelegramMethod

log = logging.getLogger(__name__)

NEVER = frozenset({"getUpdates", "sendMessageDraft", "sendChatAction"})
NOT_ON_FLOOD = frozenset({"editMessageText"})
# a reply with a plain form: a server error goes straight to that form (bot/output/rich.py), not through retries
NOT_ON_SERVER_ERROR = frozenset({"sendRichMessage"})


class TransientErrorRetry(BaseRequestMiddleware):
    def __init__(self, attempts: int = 4, max_retry_after_s: float = 30.0, backoff_s: float = 0.5) -> None:
        self.attempts = attempts
        self.max_retry_after_s = max_retry_after_s
        self.backoff_s = backoff_s

    async def __call__(self, make_request: NextRequestMiddlewareType[Any], bot: Bot,
                       method: TelegramMethod[Any]) -> Response[Any]:
        name = str(getattr(method, "__api_method__", type(method).__name__))
        if name in NEVER:
            return await make_request(bot, method)
        for attempt in range(1, self.attempts + 1):
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as exc:
                if name in NOT_ON_FLOOD or attempt == self.attempts or exc.retry_after > self.max_retry_after_s:
                    raise
                log.warning("%s: 429, retrying in %s s", name, exc.retry_after)
                await asyncio.sleep(exc.retry_after)
            except (TelegramServerError, TelegramNetworkError) as exc:
                if attempt == self.attempts or name in NOT_ON_SERVER_ERROR:
                    raise
                delay = min(self.backoff_s * 2 ** (attempt - 1), 5.0)
                log.warning("%s failed (%s), retry %s in %.1f s", name, type(exc).__name__, attempt, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")
