"""The middleware stack in process against the stub: a failing handler gets an apology with an error id
in the right topic, the trace goes to the log (never the token), and the update counts as handled."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from aiogram import Bot, Dispatcher, Router
from aiogram.filters import Command
from aiogram.types import Message, Update

from bot import middlewares
from bot.delivery.dedupe_store import SqlUpdateClaims
from bot.middlewares.observe import TokenRedactingFilter, UpdateContextFilter
from bot.preferences import PreferenceStore
from dev.telegram_stub import TelegramStub
from infra.db import create_engine
from infra.migrate import migrate
from infra.settings import Settings, TelegramSettings
from tests.conftest import TEST_TOKEN


async def test_a_failing_handler_gets_an_apology_and_a_logged_trace(
        stub: TelegramStub, api_bot: Bot, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    await migrate(engine)
    claims = SqlUpdateClaims(engine, ttl_s=3600)
    settings = Settings(telegram=TelegramSettings(bot_token=TEST_TOKEN))  # type: ignore[arg-type]
    dispatcher = Dispatcher()
    middlewares.install(dispatcher, settings, claims, PreferenceStore(engine))
    router = Router()

    @router.message(Command("boom"))
    async def boom(message: Message) -> None:
        raise RuntimeError(f"exploded while using {TEST_TOKEN}")

    dispatcher.include_router(router)
    caplog.handler.addFilter(UpdateContextFilter())
    caplog.handler.addFilter(TokenRedactingFilter([TEST_TOKEN]))
    update = Update.model_validate({"update_id": 77, "message": {
        "message_id": 3, "date": 0, "text": "/boom", "message_thread_id": 9, "is_topic_message": True,
        "chat": {"id": -100, "type": "supergroup", "title": "t", "is_forum": True},
        "from": {"id": 5, "is_bot": False, "first_name": "U", "language_code": "en"},
        "entities": [{"type": "bot_command", "offset": 0, "length": 5}]}})
    try:
        with caplog.at_level(logging.ERROR):
            await dispatcher.feed_update(api_bot, update)
            await dispatcher.feed_update(api_bot, update)  # redelivered: skipped
    finally:
        await engine.dispose()

    apologies = stub.calls_to("sendMessage", -100)
    assert len(apologies) == 1
    assert apologies[0].params["message_thread_id"] == 9
    assert "Sorry, something went wrong. Error id: " in apologies[0].params["text"]
    error_id = apologies[0].params["text"].rsplit(" ", 1)[1]
    record = next(r for r in caplog.records if r.name == "bot.errors")
    assert record.error_id == error_id and record.update_id == 77 and record.chat_id == -100  # type: ignore[attr-defined]
    formatted = caplog.handler.format(record)
    assert "Traceback" in formatted and "RuntimeError: exploded while using ***" in formatted
    assert TEST_TOKEN not in formatted
