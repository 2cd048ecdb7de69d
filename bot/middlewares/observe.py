"""Structured logging and metrics for every update: ids on every log line, latency by update type."""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import Chat, TelegramObject, Update, User

from bot import metrics

log = logging.getLogger("bot.updates")

UPDATE_CONTEXT: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar("update_context",
                                                                                      default=None)


class UpdateContextFilter(logging.Filter):
    """Adds update_id / chat_id / user_id of the update being processed to every log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (UPDATE_CONTEXT.get() or {}).items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class TokenRedactingFilter(logging.Filter):
    """Belt and braces: a library that formats a request URL into a message must not leak the token."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s]

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self._secrets):
            record.msg, record.args = self._redact(message), None
        if record.exc_info:
            trace = _FORMATTER.formatException(record.exc_info)
            if any(secret in trace for secret in self._secrets):
                # Formatters re-render exc_info themselves; fold the redacted trace into the message.
                record.msg, record.args = f"{record.getMessage()}\n{self._redact(trace)}", None
                record.exc_info, record.exc_text = None, None
        return True


_FORMATTER = logging.Formatter()


def update_ids(update: Update, data: dict[str, Any]) -> dict[str, int]:
    ids = {"update_id": update.update_id}
    chat: Chat | None = data.get("event_chat")
    user: User | None = data.get("event_from_user")
    if chat is not None:
        ids["chat_id"] = chat.id
    if user is not None:
        ids["user_id"] = user.id
    return ids


class ObserveMiddleware(BaseMiddleware):
    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Update):
            return await handler(event, data)
        kind = event.event_type
        metrics.UPDATES.labels(kind).inc()
        ids = update_ids(event, data)
        token = UPDATE_CONTEXT.set(ids)
        started = time.perf_counter()
        try:
            return await handler(event, data)
        finally:
            elapsed = time.perf_counter() - started
            metrics.UPDATE_LATENCY.labels(kind).observe(elapsed)
            log.debug("update %s processed", kind, extra={"duration_ms": round(elapsed * 1000, 1)})
            UPDATE_CONTEXT.reset(token)
