"""Who is the bot being spoken to: private chats always; groups only when explicitly addressed.

With privacy mode a group bot still sees commands meant for other bots and, when it is an admin, every
message. It must answer only to ``/ask …``, ``/cmd@ourbot``, a reply to one of its own messages or an
explicit @mention — never to the rest of the conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiogram import Bot
from aiogram.enums import ChatType, MessageEntityType
from aiogram.filters import BaseFilter
from aiogram.types import Message, TelegramObject
from magic_filter import MagicFilter

PRIVATE = ChatType.PRIVATE.value


GENERAL_TOPIC = 1  # a forum's General topic: sending with this thread id fails ("message thread not found")


def thread_of(message: Message) -> int | None:
    """The topic to reply in (a forum supergroup's, or a private chat's with a topic-mode bot, Bot API 9.3).

    Only a message marked ``is_topic_message`` is in a topic: replies in non-forum groups and messages in
    General also carry thread ids, and sending to General by id fails, so those answer without one.
    """
    if not message.is_topic_message or message.message_thread_id in (None, GENERAL_TOPIC):
        return None
    return message.message_thread_id


def strip_mention(text: str, username: str) -> str:
    lowered = text.lower()
    mention = "@" + username.lower()
    index = lowered.find(mention)
    if index < 0:
        return text.strip()
    return (text[:index] + text[index + len(mention):]).strip(" \n,:;")


def addressed_question(message: Message, bot_id: int, username: str) -> str | None:
    """The question text if this message is a question for the bot, else None.

    Commands are not questions here (each command has its own handler); ``/ask`` is handled by its own
    router too. In groups: a reply to us or an explicit mention (entity or text) addresses the bot.
    """
    text = message.text or message.caption
    if not text or text.startswith("/"):
        return None
    if message.chat.type == PRIVATE:
        return text.strip()
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return strip_mention(text, username)
    for entity in message.entities or message.caption_entities or []:
        if entity.type == MessageEntityType.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            return text.strip()
        if entity.type == MessageEntityType.MENTION:
            mentioned = entity.extract_from(text)
            if mentioned.lower() == "@" + username.lower():
                return strip_mention(text, username)
    # Entities can be missing on forwarded or edited text; a literal @ourbot still counts.
    if "@" + username.lower() in text.lower():
        return strip_mention(text, username)
    return None


class AddressedQuestion(BaseFilter):
    """Passes messages that are questions to the bot, injecting ``question`` (mention stripped)."""

    async def __call__(self, message: Message, bot: Bot) -> bool | dict[str, Any]:
        me = await bot.me()
        question = addressed_question(message, me.id, me.username or "")
        if question is None:
            return False
        return {"question": question}


class Sync(BaseFilter):
    """A cheap synchronous check (``F.text``, ``F.data.startswith("quote:")``, a predicate) run on the loop.

    aiogram runs every filter that is not a coroutine through ``asyncio.to_thread``: a thread hand-off per
    check, for a check that takes microseconds, on every update that reaches the handler. Measured under
    ``anchorgpu bench bot``: a /quote update paid one such hand-off for the /fit document handler's
    ``F.document``, and the worker threads fought the event loop for the GIL.
    """

    def __init__(self, check: MagicFilter | Callable[[Any], Any]) -> None:
        self._check = check.resolve if isinstance(check, MagicFilter) else check

    async def __call__(self, event: TelegramObject) -> Any:
        return self._check(event)
