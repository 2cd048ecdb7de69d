"""An in-process aiogram Bot talking HTTP to the Bot API stub (for streaming and rendering tests), through the
production session (JSON bodies, multipart uploads, the retry policy)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties

from bot.transport.session import telegram_session
from dev.telegram_stub import TelegramStub
from tests.conftest import TEST_TOKEN


@pytest.fixture
async def api_bot(stub: TelegramStub) -> AsyncIterator[Bot]:
    session = telegram_session(stub.base_url)
    bot = Bot(TEST_TOKEN, session=session, default=DefaultBotProperties(parse_mode="HTML"))
    try:
        yield bot
    finally:
        await bot.session.close()
