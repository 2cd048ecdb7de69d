"""aiogram app factory and runners. Heavy services are built once here and injected into handlers."""

from __future__ import annotations

import logging

from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode

from anchorgpu.settings import PUBLIC_BOT_API, Settings
from bot.routers import build_root_router

log = logging.getLogger(__name__)


def create_bot(settings: Settings) -> Bot:
    token = settings.telegram.bot_token
    if token is None:
        raise ValueError("TELEGRAM_BOT_TOKEN is not set")
    session = AiohttpSession()
    if settings.telegram.api_base != PUBLIC_BOT_API:
        session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram.api_base))
    return Bot(token.get_secret_value(), session=session,
               default=DefaultBotProperties(parse_mode=ParseMode.HTML))


def create_dispatcher(settings: Settings) -> Dispatcher:
    dispatcher = Dispatcher(settings=settings)
    dispatcher.include_router(build_root_router())
    return dispatcher


async def run_bot(settings: Settings) -> None:
    bot = create_bot(settings)
    dispatcher = create_dispatcher(settings)
    await bot.delete_webhook(drop_pending_updates=False)
    log.info("polling %s", settings.telegram.api_base)
    # aiogram installs SIGINT/SIGTERM handlers and stops polling gracefully, closing the session.
    await dispatcher.start_polling(bot, handle_signals=True, close_bot_session=True)
