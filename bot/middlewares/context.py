"""Per-update context: the group allow-list, and the user's language and answer length."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.enums import ChatType
from aiogram.types import Chat, TelegramObject, User

from bot.preferences import PreferenceStore, Resolved
from infra.i18n import pick_lang

log = logging.getLogger(__name__)


class AllowListMiddleware(BaseMiddleware):
    """With TELEGRAM_ALLOWED_CHATS set, groups not on the list are ignored (private chats always work)."""

    def __init__(self, allowed_chats: list[int]) -> None:
        self.allowed = set(allowed_chats)

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        chat: Chat | None = data.get("event_chat")
        if self.allowed and chat is not None and chat.type != ChatType.PRIVATE and chat.id not in self.allowed:
            log.debug("chat %s is not on the allow-list", chat.id)
            return None
        return await handler(event, data)


class PreferencesMiddleware(BaseMiddleware):
    """Injects ``lang``, ``lang_explicit`` and ``answer_length`` for the handler, and the three together as
    ``reader`` (:class:`bot.preferences.Resolved`; group setting > user setting > Telegram)."""

    def __init__(self, store: PreferenceStore) -> None:
        self.store = store

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        user: User | None = data.get("event_from_user")
        chat: Chat | None = data.get("event_chat")
        try:
            resolved = await self.store.resolve(
                user_id=user.id if user else None, chat_id=chat.id if chat else None,
                is_private=chat is None or chat.type == ChatType.PRIVATE,
                language_code=user.language_code if user else None)
        except Exception:  # database down: Telegram's language and defaults still let the handler answer
            log.warning("preferences unavailable, using defaults", exc_info=True)
            resolved = Resolved(lang=pick_lang(user.language_code if user else None), answer_length="normal")
        data["reader"] = resolved  # the three below, together
        data["lang"] = resolved.lang
        data["lang_explicit"] = resolved.lang_explicit
        data["answer_length"] = resolved.answer_length
        data["preferences"] = self.store
        return await handler(event, data)
