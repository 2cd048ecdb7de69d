"""The baseline for ``anchorgpu bench bot``: a bare aiogram echo bot (no middlewares, no services)."""

from __future__ import annotations

import asyncio

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import InlineQuery, InlineQueryResultArticle, InputTextMessageContent, Message

from infra.settings import get_settings


async def main() -> None:
    settings = get_settings().telegram
    assert settings.bot_token is not None
    bot = Bot(settings.bot_token.get_secret_value(),
              session=AiohttpSession(api=TelegramAPIServer.from_base(settings.api_base)))
    dispatcher = Dispatcher()

    @dispatcher.message()
    async def echo(message: Message) -> None:
        await message.answer(message.text or "?")

    @dispatcher.inline_query()
    async def inline(query: InlineQuery) -> None:
        text = query.query or "echo"
        await query.answer([InlineQueryResultArticle(id="1", title=text,
                                                     input_message_content=InputTextMessageContent(
                                                         message_text=text))], cache_time=0)

    await dispatcher.start_polling(bot, handle_signals=True, close_bot_session=True)


if __name__ == "__main__":
    asyncio.run(main())
