"""Notices meant for one member of a group: ephemeral where Telegram allows it, else a plain reply.

A rate-limit warning, a queue position, an "administrators only" refusal, an expired button or someone
else's «Стоп» concern one person; in a group everybody else would read them. Bot API 10.3 ephemeral
messages (``ephemeral_message_parameters``) show a message to one member only. The rules:

* groups and supergroups only (in a private chat the notice is an ordinary message or button alert);
* any bot, within 15 s of the receiver's eligible action: a button press (``callback_query_id``) or a
  reply to an ephemeral message;
* a bot that is an administrator: to any member, any time.

So a button's notice is always tried ephemerally (its ``callback_query_id`` makes any bot eligible) and
falls back to the button's alert. A message's notice is tried ephemerally, which works when the bot is an
administrator; Telegram's refusal falls back to a reply and is remembered for the chat for
``refused_ttl_s``, so a bot that is not an administrator pays one refused call per chat per ten minutes,
not one per notice — and nothing is asked of Telegram up front (no getChatMember on the hot path).
Ephemeral messages may vanish and their delivery is not guaranteed, which is fine for notices.
"""

from __future__ import annotations

import contextlib
import logging
import time

from aiogram import Bot
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.types import CallbackQuery, EphemeralMessageParameters, Message

from bot.filters import thread_of
from bot.output.streaming import reply_parameters
from bot.transport.retry import final_send

log = logging.getLogger(__name__)
REFUSED_TTL_S = 600.0
EDIT_EVERY_S = 3.0  # an ephemeral edit is a message like any other for flood control


def is_group(chat_type: str) -> bool:
    return chat_type in (ChatType.GROUP, ChatType.SUPERGROUP)


class Notices:
    """The one place that decides ephemeral or not (see the module docstring); shared by the process."""

    def __init__(self, refused_ttl_s: float = REFUSED_TTL_S) -> None:
        self.refused_ttl_s = refused_ttl_s
        self._refused_until: dict[int, float] = {}

    # ---- the decision -----------------------------------------------------------------------------
    def may_try(self, chat_id: int) -> bool:
        """False while the chat refused an ephemeral message without a button press lately."""
        until = self._refused_until.get(chat_id)
        if until is None:
            return True
        if time.monotonic() >= until:
            del self._refused_until[chat_id]
            return True
        return False

    async def ephemeral(self, bot: Bot, chat_id: int, user_id: int, text: str, *, thread_id: int | None = None,
                        callback_query_id: str | None = None) -> Message | None:
        """Send ``text`` (plain) to one member; None when Telegram refuses (the caller falls back)."""
        if callback_query_id is None and not self.may_try(chat_id):
            return None
        params = EphemeralMessageParameters(receiver_user_id=user_id, callback_query_id=callback_query_id)
        try:
            sent = await final_send(lambda: bot.send_message(
                chat_id, text, message_thread_id=thread_id, parse_mode=None,
                ephemeral_message_parameters=params))
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            log.info("ephemeral notice refused in %s (%s); replying instead", chat_id, exc.message)
            if callback_query_id is None:
                self._refused_until[chat_id] = time.monotonic() + self.refused_ttl_s
            return None
        return sent

    # ---- callers ----------------------------------------------------------------------------------
    async def to_sender(self, message: Message, text: str) -> Message | None:
        """A notice for whoever sent ``message``: ephemeral in a group when allowed, else a reply."""
        bot = message.bot
        assert bot is not None
        thread_id = thread_of(message)
        if is_group(message.chat.type) and message.from_user is not None:
            sent = await self.ephemeral(bot, message.chat.id, message.from_user.id, text, thread_id=thread_id)
            if sent is not None:
                return sent
        reply_to = None if message.chat.type == ChatType.PRIVATE else message.message_id
        return await final_send(lambda: bot.send_message(
            message.chat.id, text, message_thread_id=thread_id, parse_mode=None,
            reply_parameters=reply_parameters(reply_to)))

    async def to_presser(self, query: CallbackQuery, text: str, *, alert: bool = True) -> None:
        """A notice for whoever pressed the button: ephemeral in a group, else the button's alert."""
        message = query.message
        bot = query.bot
        if (bot is not None and isinstance(message, Message) and is_group(message.chat.type)
                and message.message_id != 0):  # a press on an ephemeral message: its alert says it
            sent = await self.ephemeral(bot, message.chat.id, query.from_user.id, text,
                                        thread_id=thread_of(message), callback_query_id=query.id)
            if sent is not None:
                # the press still needs an answer, or the button's spinner turns until it times out
                with contextlib.suppress(TelegramAPIError):
                    await query.answer()
                return
        await query.answer(text, show_alert=alert)


class PersonalNotice:
    """One ephemeral notice kept current (the queue position) and removed once it no longer holds.

    :meth:`show` returns False when the notice cannot be ephemeral: the caller shows it its own way.
    """

    def __init__(self, notices: Notices, bot: Bot, chat_id: int, user_id: int, thread_id: int | None) -> None:
        self.notices = notices
        self.bot = bot
        self.chat_id = chat_id
        self.user_id = user_id
        self.thread_id = thread_id
        self.sent: Message | None = None
        self._text = ""
        self._edited_at = 0.0
        self._refused = False

    async def show(self, text: str) -> bool:
        if self._refused:
            return False
        if self.sent is None:
            self.sent = await self.notices.ephemeral(self.bot, self.chat_id, self.user_id, text,
                                                     thread_id=self.thread_id)
            self._refused = self.sent is None
            self._text, self._edited_at = text, time.monotonic()
            return not self._refused
        now = time.monotonic()
        ephemeral_id = self.sent.ephemeral_message_id
        if text != self._text and now - self._edited_at >= EDIT_EVERY_S and ephemeral_id:
            self._text, self._edited_at = text, now
            try:
                await self.bot.edit_ephemeral_message_text(chat_id=self.chat_id, receiver_user_id=self.user_id,
                                                           ephemeral_message_id=ephemeral_id, text=text,
                                                           parse_mode=None)
            except TelegramAPIError as exc:  # gone already (ephemeral messages may vanish): nothing to keep
                log.debug("ephemeral edit failed: %s", exc)
        return True

    async def close(self) -> None:
        sent, self.sent = self.sent, None
        if sent is None or not sent.ephemeral_message_id:
            return
        try:
            await self.bot.delete_ephemeral_message(chat_id=self.chat_id, receiver_user_id=self.user_id,
                                                    ephemeral_message_id=sent.ephemeral_message_id)
        except TelegramAPIError as exc:
            log.debug("ephemeral delete failed: %s", exc)
