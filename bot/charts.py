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

from bot.streaming import Target, reply_parameters, with_retry_after
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
        return await with_retry_after(lambda: bot.send_photo(
            target.chat_id, photo, caption=caption, parse_mode="HTML", message_thread_id=target.thread_id,
            reply_parameters=reply_parameters(target.reply_to_message_id if reply else None),
            reply_markup=reply_markup), "sendPhoto")


CHART_PHOTOS = ChartPhotos()
