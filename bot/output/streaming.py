"""Streaming an answer into Telegram without tripping flood control.

Private chats get ``sendMessageDraft`` previews (Bot API 9.3+: an ephemeral bubble animated by reusing one
non-zero ``draft_id``) and then exactly one real message per chunk. Groups get a placeholder message that
is edited while the answer grows — at most once per ``group_edit_interval_s`` per chat, shared by every
answer streaming in that chat (Telegram allows about 20 messages a minute per group and edits count), never
with identical text ("message is not modified"). A 429 pauses that chat's previews for ``retry_after``;
final messages wait it out and are retried, so a flood-control answer never loses text.

While the question waits for the model, ``sendChatAction(typing)`` is repeated every few seconds and the
queue position is shown (in the draft bubble privately, in the placeholder in groups).

Stopping (Bot API 10.3): drafts are sent with ``can_stop`` (Telegram draws a stop button on the bubble and
sends ``stopped_message_generation``) and ``keep_on_stop`` (the bubble stays until the final message
replaces it). In groups the placeholder carries ``stop_markup`` (a «Стоп» button) on every edit; the final
message drops it. After :meth:`AnswerStream.halt` no preview goes out any more.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aiogram import Bot
from aiogram.enums import ChatAction
from aiogram.exceptions import TelegramBadRequest, TelegramRetryAfter
from aiogram.types import InlineKeyboardMarkup, Message, ReplyParameters

from bot import metrics
from bot.filters import thread_of
from bot.output.rendering import split_html, split_plain, strip_tags, truncate_preview
from bot.transport.retry import final_send
from infra.i18n import Lang, t

log = logging.getLogger(__name__)
T = TypeVar("T")

TYPING_EVERY_S = 4.5  # a chat action shows for about 5 s
_draft_ids = itertools.count(int(time.time()) % 1_000_000 * 1000 + 1)


def new_draft_id() -> int:
    """A non-zero id unique in this process: a draft's id and, in groups, the «Стоп» button's."""
    return next(_draft_ids)


@dataclass(frozen=True)
class Target:
    chat_id: int
    thread_id: int | None
    reply_to_message_id: int | None
    is_private: bool


class ChatPacer:
    """Earliest time the next preview may go to each chat; shared by all streams in the process."""

    def __init__(self, private_interval_s: float = 1.0, group_interval_s: float = 3.0,
                 draft_interval_s: float = 0.5) -> None:
        self.private_interval_s = private_interval_s
        self.group_interval_s = group_interval_s
        self.draft_interval_s = draft_interval_s
        self._next: dict[int, float] = {}

    def interval(self, target: Target, draft: bool) -> float:
        if draft:
            return self.draft_interval_s
        return self.private_interval_s if target.is_private else self.group_interval_s

    def wait_s(self, chat_id: int, now: float) -> float:
        return max(0.0, self._next.get(chat_id, 0.0) - now)

    def spend(self, chat_id: int, now: float, interval: float) -> None:
        self._next[chat_id] = max(self._next.get(chat_id, 0.0), now + interval)

    def back_off(self, chat_id: int, seconds: float) -> None:
        self._next[chat_id] = max(self._next.get(chat_id, 0.0), time.monotonic() + seconds)


def _is_parse_error(exc: TelegramBadRequest) -> bool:
    return "can't parse entities" in exc.message or "unsupported start tag" in exc.message.lower()


def _is_not_modified(exc: TelegramBadRequest) -> bool:
    return "message is not modified" in exc.message


async def send_html(bot: Bot, target: Target, html_text: str, *, reply: bool = True,
                    reply_markup: Any = None) -> list[Message]:
    """Send HTML split under the limit; if Telegram still rejects the markup, resend as plain text."""
    sent: list[Message] = []
    chunks = split_html(html_text)
    for index, chunk in enumerate(chunks):
        markup = reply_markup if index == len(chunks) - 1 else None
        reply_to = target.reply_to_message_id if reply and index == 0 else None
        sent.extend(await _send_chunk(bot, target, chunk, reply_to, markup))
    return sent


def reply_parameters(message_id: int | None) -> ReplyParameters | None:
    # allow_sending_without_reply: a deleted question must not lose the answer.
    return None if message_id is None else ReplyParameters(message_id=message_id,
                                                           allow_sending_without_reply=True)


async def _send_chunk(bot: Bot, target: Target, chunk: str, reply_to: int | None,
                      reply_markup: Any) -> list[Message]:
    try:
        return [await final_send(lambda: bot.send_message(
            target.chat_id, chunk, message_thread_id=target.thread_id, parse_mode="HTML",
            reply_parameters=reply_parameters(reply_to), reply_markup=reply_markup))]
    except TelegramBadRequest as exc:
        if not _is_parse_error(exc):
            raise
        log.warning("Telegram rejected the markup (%s); sending plain text", exc.message)
    sent = []
    for index, part in enumerate(split_plain(strip_tags(chunk))):
        sent.append(await final_send(_plain_sender(bot, target, part, None if index else reply_to,
                                                         reply_markup)))
    return sent


def _plain_sender(bot: Bot, target: Target, text: str, reply_to: int | None,
                  reply_markup: Any) -> Callable[[], Awaitable[Message]]:
    def send() -> Awaitable[Message]:
        return bot.send_message(target.chat_id, text, message_thread_id=target.thread_id, parse_mode=None,
                                reply_parameters=reply_parameters(reply_to), reply_markup=reply_markup)

    return send


class AnswerStream:
    """One answer being streamed to one chat. Use :meth:`queued`, :meth:`delta`, then :meth:`finish`."""

    def __init__(self, bot: Bot, target: Target, lang: Lang, pacer: ChatPacer, *,
                 stop_markup: InlineKeyboardMarkup | None = None, draft_id: int | None = None) -> None:
        self.bot = bot
        self.target = target
        self.lang = lang
        self.pacer = pacer
        self.draft_id = draft_id if draft_id is not None else new_draft_id()
        self.stop_markup = stop_markup  # on the group placeholder while the answer is generated
        self.halted = False
        self.text = ""
        self.placeholder: Message | None = None
        self._shown = ""  # what the chat shows now (draft or placeholder)
        self._wanted = ""  # what it should show next
        self._changed = asyncio.Event()
        self._typing_task: asyncio.Task[None] | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._drafts_work = target.is_private
        self._busy = asyncio.Lock()

    # ---- lifecycle ------------------------------------------------------------------------------
    async def __aenter__(self) -> AnswerStream:
        self._typing_task = asyncio.create_task(self._keep_typing())
        self._flusher = asyncio.create_task(self._flush_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop_background()

    async def _stop_background(self) -> None:
        # Never cancel a preview mid-request: a placeholder that reached Telegram but not our
        # ``self.placeholder`` would leave an orphan message next to the final one. Holding ``_busy``
        # means the flusher is between requests, where cancelling it is harmless.
        async with self._busy:
            for task in (self._typing_task, self._flusher):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task

    # ---- events ---------------------------------------------------------------------------------
    def queued(self, position: int) -> None:
        if position > 0:
            self._want(t("queue_position", self.lang, position=position))

    def started(self) -> None:
        if not self.text:
            self._want(t("thinking", self.lang))

    def delta(self, text: str) -> None:
        self.text += text
        if self.text.strip():
            self._want(self.text)
            if self._typing_task is not None:
                self._typing_task.cancel()

    def _want(self, text: str) -> None:
        self._wanted = truncate_preview(text)
        self._changed.set()

    def halt(self) -> None:
        """The user stopped this answer: no more previews (a draft sent now would come back to life)."""
        self.halted = True
        if self._typing_task is not None:
            self._typing_task.cancel()

    async def finish(self, html_text: str, reply_markup: Any = None) -> list[Message]:
        """Deliver the final answer: real messages privately, the placeholder plus more in groups."""
        await self._stop_background()
        chunks = split_html(html_text)
        if not chunks:
            return []
        sent: list[Message] = []
        if self.placeholder is not None:
            last = len(chunks) == 1
            markup = reply_markup if last else None
            if markup is None and self.stop_markup is not None:
                markup = InlineKeyboardMarkup(inline_keyboard=[])  # the «Стоп» button goes with the stream
            edited = await self._final_edit(chunks[0], markup)
            sent.append(edited)
            rest = chunks[1:]
        else:
            rest = chunks
        for index, chunk in enumerate(rest):
            markup = reply_markup if index == len(rest) - 1 else None
            reply_to = self.target.reply_to_message_id if not sent and not self.target.is_private else None
            sent.extend(await _send_chunk(self.bot, self.target, chunk, reply_to, markup))
        return sent

    async def _final_edit(self, chunk: str, reply_markup: Any) -> Message:
        assert self.placeholder is not None
        placeholder = self.placeholder
        try:
            result = await final_send(lambda: self.bot.edit_message_text(
                text=chunk, chat_id=self.target.chat_id, message_id=placeholder.message_id,
                parse_mode="HTML", reply_markup=reply_markup))
        except TelegramBadRequest as exc:
            if _is_not_modified(exc):
                return placeholder
            if not _is_parse_error(exc):
                raise
            plain = split_plain(strip_tags(chunk))
            result = await final_send(lambda: self.bot.edit_message_text(
                text=plain[0], chat_id=self.target.chat_id, message_id=placeholder.message_id,
                parse_mode=None, reply_markup=reply_markup))
        return result if isinstance(result, Message) else placeholder

    # ---- background -----------------------------------------------------------------------------
    async def _keep_typing(self) -> None:
        while True:
            try:
                await self.bot.send_chat_action(self.target.chat_id, ChatAction.TYPING,
                                                message_thread_id=self.target.thread_id)
            except TelegramRetryAfter as exc:
                metrics.RETRY_AFTER.labels("sendChatAction").inc()
                await asyncio.sleep(exc.retry_after)
                continue
            except Exception:
                log.debug("chat action failed", exc_info=True)
            await asyncio.sleep(TYPING_EVERY_S)

    async def _flush_loop(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            draft = self._drafts_work
            wait = self.pacer.wait_s(self.target.chat_id, time.monotonic()) if not draft else 0.0
            if draft:
                wait = max(wait, self._next_draft_at - time.monotonic())
            if wait > 0:
                await asyncio.sleep(wait)
            text = self._wanted
            if not text.strip() or text == self._shown or self.halted:
                continue
            try:
                async with self._busy:
                    await self._show(text, draft)
                self._shown = text
            except TelegramRetryAfter as exc:
                metrics.RETRY_AFTER.labels("preview").inc()
                self.pacer.back_off(self.target.chat_id, exc.retry_after)
                self._next_draft_at = time.monotonic() + exc.retry_after
                self._changed.set()
            except TelegramBadRequest as exc:
                if draft and not _is_not_modified(exc):
                    # Drafts refused (older server, not a private chat): fall back to a placeholder.
                    log.info("drafts unavailable (%s); streaming by edits", exc.message)
                    self._drafts_work = False
                    self._changed.set()
                elif not _is_not_modified(exc):
                    log.warning("preview update failed: %s", exc.message)
            except Exception:
                log.warning("preview update failed", exc_info=True)
                if draft:  # a server that fails drafts otherwise (5xx, not a Bot API body): edits instead
                    self._drafts_work = False
                    self._changed.set()

    _next_draft_at = 0.0

    async def _show(self, text: str, draft: bool) -> None:
        now = time.monotonic()
        if draft:
            self._next_draft_at = now + self.pacer.draft_interval_s
            await self.bot.send_message_draft(chat_id=self.target.chat_id, draft_id=self.draft_id, text=text,
                                              message_thread_id=self.target.thread_id, parse_mode=None,
                                              can_stop=True, keep_on_stop=True)
            return
        self.pacer.spend(self.target.chat_id, now, self.pacer.interval(self.target, draft=False))
        if self.placeholder is None:
            self.placeholder = await self.bot.send_message(
                self.target.chat_id, text, message_thread_id=self.target.thread_id, parse_mode=None,
                reply_parameters=reply_parameters(self.target.reply_to_message_id), reply_markup=self.stop_markup)
            return
        # the markup again on every edit: an edit without one would drop the «Стоп» button
        await self.bot.edit_message_text(text=text, chat_id=self.target.chat_id,
                                         message_id=self.placeholder.message_id, parse_mode=None,
                                         reply_markup=self.stop_markup)


def target_of(message: Message) -> Target:
    """Where a reply to ``message`` goes: same chat and forum topic; quoted in groups."""
    is_private = message.chat.type == "private"
    return Target(chat_id=message.chat.id, thread_id=thread_of(message),
                  reply_to_message_id=None if is_private else message.message_id, is_private=is_private)


async def reply_html(message: Message, html_text: str, reply_markup: Any = None) -> list[Message]:
    """Reply with HTML: split under the limit, 429s waited out, plain text if the markup is refused."""
    assert message.bot is not None
    return await send_html(message.bot, target_of(message), html_text, reply_markup=reply_markup)
