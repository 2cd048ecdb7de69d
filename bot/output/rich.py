"""Table replies as rich messages (Bot API 10.1 ``sendRichMessage``), HTML when that is not possible.

The views describe a reply as a :class:`app.views.table.Report`; here it becomes ``InputRichMessage(blocks=…)``
with real table blocks (header cells, captions), split under Telegram's documented limits: 500 blocks per
message counting every table row, 20 columns, 32,768 characters (:mod:`bot.output.rich_split`). A table
too long for one message goes on in the next with its header repeated; more than ``MAX_PARTS`` messages are
cut with a note, and columns past the 20th are dropped with a note.

Whether rich messages go out is decided without asking Telegram on each update: the setting
(``TELEGRAM_RICH_MESSAGES``), then what the server answered before. A server that does not know the method
(404, or a reply that is not a Message) turns rich messages off for the process, once; a server that fails
otherwise (a 5xx, a body that is not a Bot API response, a timeout: self-hosted and older servers, proxies,
emulators, outages) turns them off for :data:`SERVER_REFUSED_TTL_S`; a 400 for one chat (e.g. a chat where
they are not allowed) falls back for that chat only. The fallback is the view's own HTML, so a refused rich
reply costs one call, never the answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from aiogram import Bot
from aiogram.exceptions import (
    AiogramError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramNotFound,
    TelegramRetryAfter,
)
from aiogram.methods import SendRichMessage
from aiogram.types import (
    InputFile,
    InputRichBlockParagraph,
    InputRichBlockSectionHeading,
    InputRichBlockTable,
    InputRichBlockUnion,
    InputRichMessage,
    Message,
    RichBlockTableCell,
    RichTextBold,
    RichTextItalic,
)
from pydantic import ValidationError

from app.views.table import Report, Table, render_report
from bot.output.rendering import utf16_len
from bot.output.rich_split import MAX_BLOCKS, MAX_CHARS, split_report
from bot.output.streaming import Target, reply_parameters, send_html
from bot.transport.retry import final_send
from bot.transport.session import JsonReady
from infra.i18n import Lang
from infra.lru import LRUCache
from infra.markup import HTML

log = logging.getLogger(__name__)

SERVER_REFUSED_TTL_S = 600.0  # a server that failed a rich message is not asked again for this long


class RichReplies:
    """Whether to try ``sendRichMessage``: the setting, and what the server said before (cached)."""

    def __init__(self, enabled: bool, max_refused_chats: int = 4096,
                 server_refused_ttl_s: float = SERVER_REFUSED_TTL_S) -> None:
        self.enabled = enabled
        self.method_missing = False
        self.server_refused_ttl_s = server_refused_ttl_s
        self._server_refused_until = 0.0
        self._refused: LRUCache[int, bool] = LRUCache(max_refused_chats)

    def usable(self, chat_id: int) -> bool:
        return (self.enabled and not self.method_missing and time.monotonic() >= self._server_refused_until
                and self._refused.get(chat_id) is None)

    def refused(self, chat_id: int, exc: Exception) -> None:
        if isinstance(exc, TelegramNotFound | ValidationError) or (
                isinstance(exc, TelegramBadRequest) and "method" in exc.message.lower()):
            if not self.method_missing:
                log.warning("the Bot API server does not know sendRichMessage (%s); replying in HTML", exc)
            self.method_missing = True
            return
        if isinstance(exc, TelegramBadRequest | TelegramForbiddenError):  # about this chat
            log.info("rich message refused in chat %s (%s); replying in HTML there", chat_id, exc)
            self._refused.put(chat_id, True)
            return
        # a 5xx, a body that is no Bot API response, a timeout: the server's trouble, not the chat's
        log.warning("sendRichMessage failed (%s: %s); replying in HTML for %.0f s", type(exc).__name__, exc,
                    self.server_refused_ttl_s)
        self._server_refused_until = time.monotonic() + self.server_refused_ttl_s


# ---- blocks ---------------------------------------------------------------------------------------------
def _cell(text: str, align: str, header: bool = False) -> RichBlockTableCell:
    # an empty cell is drawn empty: no ``text`` (an empty string is not valid rich text)
    return RichBlockTableCell(align=align, valign="middle", text=text or None, is_header=header or None)


def table_block(table: Table) -> InputRichBlockTable:
    width = range(len(table.headers))
    cells = [[_cell(table.headers[i], table.align_of(i), header=True) for i in width]]
    cells.extend([_cell(row[i], table.align_of(i)) for i in width] for row in table.rows)
    if table.total:
        cells.append([_cell(table.total[i], table.align_of(i), header=True) for i in width])
    return InputRichBlockTable(cells=cells, is_bordered=True, is_striped=True,
                               caption=RichTextBold(text=table.caption) if table.caption else None)


def _cell_json(text: str, align: str, header: bool = False) -> dict[str, Any]:
    cell: dict[str, Any] = {"align": align, "valign": "middle"}
    if text:
        cell["text"] = text
    if header:
        cell["is_header"] = True
    return cell


def blocks_json(report: Report) -> list[dict[str, Any]]:
    """:func:`to_blocks` as the JSON Telegram receives, built directly: the hot path's form.

    Building the pydantic block models costs ~2 ms per reply (a model per table cell), more than the rest of
    an update; a test keeps both forms identical, so the shapes are still aiogram's.
    """
    blocks: list[dict[str, Any]] = []
    if report.title:
        blocks.append({"type": "heading", "text": report.title, "size": 3})
    for block in report.blocks:
        if isinstance(block, Table):
            width = range(len(block.headers))
            cells = [[_cell_json(block.headers[i], block.align_of(i), header=True) for i in width]]
            cells.extend([_cell_json(row[i], block.align_of(i)) for i in width] for row in block.rows)
            if block.total:
                cells.append([_cell_json(block.total[i], block.align_of(i), header=True) for i in width])
            table: dict[str, Any] = {"type": "table", "cells": cells, "is_bordered": True, "is_striped": True}
            if block.caption:
                table["caption"] = {"type": "bold", "text": block.caption}
            blocks.append(table)
        elif block.bold:
            blocks.append({"type": "paragraph", "text": {"type": "bold", "text": block.text}})
        elif block.note:
            blocks.append({"type": "paragraph", "text": {"type": "italic", "text": block.text}})
        else:
            blocks.append({"type": "paragraph", "text": block.text})
    return blocks


class SentRichMessage(Message):
    """The Message sendRichMessage returns, its ``rich_message`` left unparsed.

    Telegram echoes every block back; validating them into models is ~1 ms per reply that nothing reads
    (the bot keeps the message for its id, chat and buttons only).
    """

    rich_message: Any = None


class SendRichTable(JsonReady, SendRichMessage):
    """sendRichMessage whose blocks are :func:`blocks_json` (constructed, not validated)."""

    __returning__ = SentRichMessage

    def json_fields(self, prepare: Callable[[Any], Any]) -> dict[str, Any] | None:
        """The request's JSON without dumping and walking every table cell (see ``JsonBodySession``);
        None when a block uploads a file (the chart's first send goes as multipart)."""
        blocks = self.rich_message.blocks or []
        if any(isinstance(block.get("photo", {}).get("media"), InputFile)  # type: ignore[union-attr]
               for block in blocks):
            return None
        fields: dict[str, Any] = {"chat_id": self.chat_id, "rich_message": {"blocks": blocks}}
        for name in ("message_thread_id", "reply_parameters", "reply_markup"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = prepare(value)
        return fields


def to_blocks(report: Report) -> list[InputRichBlockUnion]:
    blocks: list[InputRichBlockUnion] = []
    if report.title:
        blocks.append(InputRichBlockSectionHeading(text=report.title, size=3))
    for block in report.blocks:
        if isinstance(block, Table):
            blocks.append(table_block(block))
        elif block.bold:
            blocks.append(InputRichBlockParagraph(text=RichTextBold(text=block.text)))
        elif block.note:
            blocks.append(InputRichBlockParagraph(text=RichTextItalic(text=block.text)))
        else:
            blocks.append(InputRichBlockParagraph(text=block.text))
    return blocks


class RichPhoto(Protocol):
    """A photo block that ends a rich reply (the /fit chart): its JSON, and what Telegram sent back."""

    caption: str  # plain text, counted against the message's character limit
    reused_file_id: bool  # the last block() referred to a file_id (which Telegram may have forgotten)

    async def block(self, fresh: bool = False) -> dict[str, Any]: ...

    def sent(self, message: Message) -> None: ...


# ---- sending --------------------------------------------------------------------------------------------
async def send_report(bot: Bot, target: Target, report: Report, fallback_html: str, *, lang: Lang,
                      rich: RichReplies | None, reply_markup: Any = None, reply: bool = True) -> list[Message]:
    """The report as rich messages when they work here, else ``fallback_html`` (the view's HTML reply).

    A split reply that Telegram refuses half-way goes on in HTML from the part that failed.
    """
    sent = await try_rich(bot, target, report, lang=lang, rich=rich, reply_markup=reply_markup, reply=reply)
    if sent is None:
        return await send_html(bot, target, fallback_html, reply=reply, reply_markup=reply_markup)
    return sent


async def try_rich(bot: Bot, target: Target, report: Report, *, lang: Lang, rich: RichReplies | None,
                   reply_markup: Any = None, reply: bool = True,
                   photo: RichPhoto | None = None) -> list[Message] | None:
    """The report as rich messages; None when none went out (not usable here, or the first was refused),
    so the caller sends its own fallback (/fit: the captioned chart, as without rich messages).

    ``photo`` ends the last message (one message for a /fit table and its chart); a ``file_id`` Telegram no
    longer knows is replaced by a fresh upload, once.
    """
    if rich is None or not rich.usable(target.chat_id):
        return None
    parts = split_report(report, lang, max_blocks=MAX_BLOCKS - (1 if photo else 0),
                         max_chars=MAX_CHARS - (utf16_len(photo.caption) if photo else 0))
    sent: list[Message] = []
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        reply_to = target.reply_to_message_id if reply and number == 0 else None
        part_photo = photo if last else None
        try:
            message = await _send_part(bot, target, blocks_json(part), reply_to,
                                       reply_markup if last else None, part_photo)
        except TelegramRetryAfter:
            raise
        except (AiogramError, ValidationError) as exc:  # any failure: the HTML form says the same
            return await _refused(bot, target, rich, exc, parts, number, sent, reply_markup)
        if part_photo is not None:
            part_photo.sent(message)
        sent.append(message)
    return sent


async def _send_part(bot: Bot, target: Target, blocks: list[dict[str, Any]], reply_to: int | None,
                     reply_markup: Any, photo: RichPhoto | None) -> Message:
    """One rich message, ``photo`` last; a remembered chart Telegram no longer knows is uploaded again, once."""
    async def send(fresh: bool) -> Message:
        extra = [await photo.block(fresh=fresh)] if photo is not None else []
        # constructed, not validated: the blocks are already the JSON (see blocks_json)
        method = SendRichTable.model_construct(
            chat_id=target.chat_id, rich_message=InputRichMessage.model_construct(blocks=blocks + extra),  # type: ignore[arg-type]
            message_thread_id=target.thread_id, reply_parameters=reply_parameters(reply_to),
            reply_markup=reply_markup)
        # a network error is not retried: the HTML form goes out instead
        return await final_send(partial(bot, method))

    try:
        return await send(fresh=False)
    except TelegramBadRequest as exc:
        if photo is None or not photo.reused_file_id or "file" not in exc.message.lower():
            raise
        return await send(fresh=True)


async def _refused(bot: Bot, target: Target, rich: RichReplies, exc: Exception, parts: list[Report], number: int,
                   sent: list[Message], reply_markup: Any) -> list[Message] | None:
    """A refused part: nothing sent yet means the caller's fallback; else the rest goes on in HTML."""
    rich.refused(target.chat_id, exc)
    if not sent:
        return None
    rest = "\n\n".join(render_report(p, HTML) for p in parts[number:])
    return sent + await send_html(bot, target, rest, reply=False, reply_markup=reply_markup)
