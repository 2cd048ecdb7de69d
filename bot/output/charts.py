"""/fit charts as Telegram photos: each picture drawn once and uploaded once.

Telegram answers an upload with a ``file_id``; sending that id again shows the same photo without a new
upload. Popular configurations repeat, so the id is remembered per picture (and per bot: ids belong to
the bot that uploaded them), and a drawn PNG is cached by :func:`gpu.fit.chart.render_chart`. A stale id
(Telegram forgot the file) is dropped and the picture is uploaded again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import BufferedInputFile, Message

from bot.output.streaming import Target, reply_parameters
from bot.transport.retry import final_send
from gpu.fit.chart import ChartKey, chart_key, render_chart
from gpu.fit.engine import FitResult
from infra.lru import LRUCache

CAPTION_LIMIT = 1024  # visible UTF-16 units, like the 4096 of a text message


class ChartPhotos:
    def __init__(self, max_remembered: int = 2048) -> None:
        self._file_ids: LRUCache[tuple[int, ChartKey], str] = LRUCache(max_remembered)

    async def send(self, bot: Bot, target: Target, result: FitResult, caption: str, *,
                   reply: bool = True, reply_markup: Any = None) -> Message:
        """Send the chart with an HTML caption; TelegramBadRequest for a caption Telegram refuses."""
        key = (bot.id, chart_key(result))
        file_id = self._file_ids.get(key)
        if file_id is not None:
            try:
                return await self._send(bot, target, file_id, caption, reply, reply_markup)
            except TelegramBadRequest as exc:
                if "file" not in exc.message.lower():
                    raise
                self._file_ids.discard(key)
        png = await asyncio.to_thread(render_chart, result)
        sent = await self._send(bot, target, BufferedInputFile(png, filename="fit.png"), caption, reply,
                                reply_markup)
        if sent.photo:
            self._file_ids.put(key, sent.photo[-1].file_id)
        return sent

    @staticmethod
    async def _send(bot: Bot, target: Target, photo: str | BufferedInputFile, caption: str, reply: bool,
                    reply_markup: Any) -> Message:
        return await final_send(lambda: bot.send_photo(
            target.chat_id, photo, caption=caption, parse_mode="HTML", message_thread_id=target.thread_id,
            reply_parameters=reply_parameters(target.reply_to_message_id if reply else None),
            reply_markup=reply_markup))

    def remembered(self, key: tuple[int, ChartKey]) -> str | None:
        return self._file_ids.get(key)

    def remember(self, key: tuple[int, ChartKey], file_id: str) -> None:
        self._file_ids.put(key, file_id)

    def forget(self, key: tuple[int, ChartKey]) -> None:
        self._file_ids.discard(key)

    def rich_photo(self, bot: Bot, result: FitResult, caption: str) -> ChartBlock:
        """The chart as the photo block of a rich reply (the table and the chart in one message)."""
        return ChartBlock(self, (bot.id, chart_key(result)), result, caption)


class ChartBlock:
    """A /fit chart inside a rich message: the remembered ``file_id`` when there is one, else the upload.

    Implements :class:`bot.output.rich.RichPhoto`: ``block`` gives the block's JSON (``fresh`` forgets a
    ``file_id`` Telegram refused), ``sent`` remembers the ``file_id`` of the photo Telegram echoed back.
    """

    def __init__(self, photos: ChartPhotos, key: tuple[int, ChartKey], result: FitResult, caption: str) -> None:
        self._photos, self._key, self._result, self.caption = photos, key, result, caption
        self.reused_file_id = False

    async def block(self, fresh: bool = False) -> dict[str, Any]:
        if fresh:
            self._photos.forget(self._key)
        file_id = self._photos.remembered(self._key)
        self.reused_file_id = file_id is not None
        media: str | BufferedInputFile
        if file_id is not None:
            media = file_id
        else:
            media = BufferedInputFile(await asyncio.to_thread(render_chart, self._result), filename="fit.png")
        return {"type": "photo", "photo": {"type": "photo", "media": media},
                "caption": {"text": self.caption}}

    def sent(self, message: Message) -> None:
        file_id = rich_photo_file_id(message.rich_message)
        if file_id is not None:
            self._photos.remember(self._key, file_id)


def rich_photo_file_id(rich_message: Any) -> str | None:
    """The largest size's ``file_id`` of the first photo block of a returned rich message (the JSON a
    :class:`bot.output.rich.SentRichMessage` keeps unparsed)."""
    for block in (rich_message or {}).get("blocks") or ():
        if block.get("type") == "photo" and block.get("photo"):
            return str(block["photo"][-1]["file_id"])
    return None


CHART_PHOTOS = ChartPhotos()
