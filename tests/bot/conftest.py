"""An in-process aiogram Bot talking HTTP to the Bot API stub (for streaming and rendering tests), through the
production session (JSON bodies, multipart uploads)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.telegram import TelegramAPIServer

from bot.transport.session import JsonBodySession
from dev.telegram_stub import TelegramStub
from tests.conftest import TEST_TOKEN


@pytest.fixture
async def api_bot(stub: TelegramStub) -> AsyncIterator[Bot]:
    session = JsonBodySession(api=TelegramAPIServer.from_base(stub.base_url))
    bot = Bot(TEST_TOKEN, session=session, default=DefaultBotProperties(parse_mode="HTML"))
    try:
        yield bot
    finally:
        await bot.session.close()
