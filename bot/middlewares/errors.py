"""The error boundary: the user gets a short apology with an error id, the log gets the trace.

If even the apology cannot be delivered (Telegram unreachable), the exception propagates: in webhook mode
that becomes a 5xx and Telegram redelivers the update, which de-duplication then lets through.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import TelegramObject, Update

from bot import metrics
from bot.filters import thread_of
from bot.fsm_storage import FSMUnavailableError
from infra.i18n import Lang, pick_lang, t

log = logging.getLogger("bot.errors")


def new_error_id() -> str:
    return secrets.token_hex(4)


class ErrorBoundaryMiddleware(BaseMiddleware):
    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        try:
            return await handler(event, data)
        except TelegramBadRequest as exc:
            if "message is not modified" not in exc.message:
                return await self._unhandled(exc, event, data)
            # A double tap: both callbacks carry the old text, the second edit changes nothing. Benign.
            log.info("edit skipped, message not modified")
            if isinstance(event, Update) and event.callback_query is not None:
                with contextlib.suppress(Exception):
                    await data["bot"].answer_callback_query(event.callback_query.id)
            return None
        except FSMUnavailableError as exc:
            # Redis (the FSM) is down: a known outage, not a bug. One clear line instead of an apology with
            # an error id; commands that need no step keep working meanwhile.
            log.warning("a step of a conversation could not be saved or read: FSM storage unavailable (%s)", exc)
            metrics.ERRORS.labels("FSMUnavailable").inc()
            if isinstance(event, Update):
                await self._tell_unavailable(event, data)
            return None
        except Exception as exc:
            return await self._unhandled(exc, event, data)

    async def _tell_unavailable(self, update: Update, data: dict[str, Any]) -> None:
        bot: Bot = data["bot"]
        text = t("fsm_unavailable", self._lang(data))
        if update.message is not None:
            await bot.send_message(update.message.chat.id, text, message_thread_id=thread_of(update.message),
                                   parse_mode=None)
        elif update.callback_query is not None:
            # the handler may have answered the button already (a vote, then the reason prompt): then the
            # alert is refused, and the vote itself was kept
            with contextlib.suppress(TelegramBadRequest):
                await bot.answer_callback_query(update.callback_query.id, text, show_alert=True)

    @staticmethod
    def _lang(data: dict[str, Any]) -> Lang:
        lang: Lang | None = data.get("lang")
        return lang or pick_lang(data["event_from_user"].language_code if data.get("event_from_user") else None)

    async def _unhandled(self, exc: Exception, event: TelegramObject, data: dict[str, Any]) -> None:
        error_id = new_error_id()
        metrics.ERRORS.labels(type(exc).__name__).inc()
        log.error("unhandled error %s while processing an update", error_id, exc_info=exc,
                  extra={"error_id": error_id})
        if isinstance(event, Update):
            await self._apologise(event, data, error_id)

    async def _apologise(self, update: Update, data: dict[str, Any], error_id: str) -> None:
        bot: Bot = data["bot"]
        text = t("error_apology", self._lang(data), error_id=error_id)
        if update.message is not None:
            message = update.message
            await bot.send_message(message.chat.id, text, message_thread_id=thread_of(message),
                                   parse_mode=None)
        elif update.callback_query is not None:
            await bot.answer_callback_query(update.callback_query.id, text, show_alert=True)
