"""/new: start a fresh conversation; in private chats with topics (Bot API 9.3/9.4), one topic per conversation.

A conversation is keyed by (chat, topic) (:func:`rag.answering.conversation.conversation_key`, topic from
:func:`bot.filters.thread_of`), so two topics of one private chat keep separate histories, like two forum
topics in a group. ``/new`` forgets the history of the conversation it is sent in. Sent in a private chat
with a topic-mode bot outside any topic, it also opens a new topic (``createForumTopic`` with the user's id)
and greets there: that topic starts with no history by construction.
"""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import Command
from aiogram.types import Message

from bot.filters import thread_of
from bot.output.streaming import reply_html
from infra.i18n import Lang, t
from infra.markup import escape
from rag.answering.answerer import Answerer
from rag.answering.conversation import conversation_key

log = logging.getLogger(__name__)
router = Router(name=__name__)


@router.message(Command("new"))
async def on_new(message: Message, bot: Bot, answerer: Answerer | None, lang: Lang) -> None:
    thread_id = thread_of(message)
    store = answerer.conversations if answerer is not None else None
    if store is not None:
        try:
            await store.clear(conversation_key(message.chat.id, thread_id))
        except Exception:  # the history stays; say so rather than pretend
            log.exception("could not clear the conversation")
            await reply_html(message, escape(t("feature_unavailable", lang)))
            return
    if message.chat.type == ChatType.PRIVATE and thread_id is None and await _topics_enabled(bot):
        try:
            topic = await bot.create_forum_topic(chat_id=message.chat.id, name=t("new_topic_name", lang))
        except TelegramAPIError as exc:  # topics switched off meanwhile: the cleared chat is the new conversation
            log.info("createForumTopic refused in a private chat: %s", exc)
        else:
            await bot.send_message(message.chat.id, escape(t("new_topic_done", lang)),
                                   message_thread_id=topic.message_thread_id)
            return
    await reply_html(message, escape(t("new_done", lang)))


async def _topics_enabled(bot: Bot) -> bool:
    me = await bot.me()  # getMe once per process: aiogram caches it
    return bool(me.has_topics_enabled)
