"""/stop: cancel my answer (waiting in the queue or being generated)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message

from bot.streaming import reply_html
from infra.i18n import Lang, t
from infra.markup import escape
from rag.answer import Answerer

router = Router(name=__name__)


@router.message(Command("stop"))
async def on_stop(message: Message, answerer: Answerer | None, lang: Lang) -> None:
    stopped = 0
    if answerer is not None and message.from_user is not None:
        stopped = answerer.cancel(str(message.from_user.id))
    await reply_html(message, escape(t("stop_done" if stopped else "stop_nothing", lang)))
