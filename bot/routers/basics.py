"""/start and /help."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandStart
from aiogram.types import Message

from anchorgpu.texts import pick_lang, t

router = Router(name=__name__)


@router.message(CommandStart())
async def on_start(message: Message) -> None:
    lang = pick_lang(message.from_user.language_code if message.from_user else None)
    await message.answer(t("start", lang))


@router.message(Command("help"))
async def on_help(message: Message) -> None:
    lang = pick_lang(message.from_user.language_code if message.from_user else None)
    await message.answer(t("help", lang))
