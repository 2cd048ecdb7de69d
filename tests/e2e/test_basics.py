"""The bot as a real process against the local Bot API stub: /start and /help in both languages."""

from __future__ import annotations

from collections.abc import Callable

from dev.telegram_stub import TelegramStub
from tests.conftest import BotProcess


async def test_start_and_help_in_russian_and_english(stub: TelegramStub,
                                                     bot_factory: Callable[..., BotProcess]) -> None:
    bot = bot_factory()
    stub.message_update("/start", chat_id=501, user_id=501, language_code="ru")
    stub.message_update("/help", chat_id=502, user_id=502, language_code="en")

    ru = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 501, timeout=120)
    en = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 502, timeout=30)

    assert "ассистент AnchorGPU" in ru[0].params["text"], bot.log()
    assert "/fit" in en[0].params["text"] and "Commands:" in en[0].params["text"]
    assert await bot.stop() == 0, bot.log()
    # graceful shutdown: the token never appears in the log
    assert "TEST-token" not in bot.log()
