"""/stop: cancel my answer (waiting in the queue or being generated)."""

from __future__ import annotations

from typing import Any

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message

from anchorgpu.texts import Lang, t
from bot.rendering import escape
from bot.streaming import reply_html

router = Router(name=__name__)


@router.message(Command("stop"))
async def on_stop(message: Message, services: Any, lang: Lang) -> None:
    answerer = getattr(services, "answerer", None)
    stopped = 0
    if answerer is not None and message.from_user is not None:
        stopped = answerer.cancel(str(message.from_user.id))
    await reply_html(message, escape(t("stop_done" if stopped else "stop_nothing", lang)))
