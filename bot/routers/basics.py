"""/start and /help."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandStart
from aiogram.types import Message

from bot.output.streaming import reply_html
from infra.i18n import Lang, pick_lang, t
from infra.markup import escape

router = Router(name=__name__)


def _lang(message: Message, lang: Lang | None) -> Lang:
    # ``lang`` comes from the preferences middleware (/settings overrides); Telegram's guess otherwise
    return lang or pick_lang(message.from_user.language_code if message.from_user else None)


@router.message(CommandStart())
async def on_start(message: Message, lang: Lang | None = None) -> None:
    await reply_html(message, escape(t("start", _lang(message, lang))))


@router.message(Command("help"))
async def on_help(message: Message, lang: Lang | None = None) -> None:
    await reply_html(message, escape(t("help", _lang(message, lang))))
