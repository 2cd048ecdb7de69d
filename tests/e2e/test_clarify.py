"""A clarifying question's buttons end to end (the bot as a real process against the Bot API stub): a
pressed common answer goes on through the ask router as the user's next message, and its buttons are spent."""

from __future__ import annotations

from collections.abc import Callable

from dev.telegram_stub import TelegramStub
from tests.conftest import BotProcess
from tests.e2e.test_quote import NO_LIMITS, buttons, press, wait_ready

CHAT = 741


async def test_a_pressed_clarify_button_is_answered_as_the_next_message(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess]) -> None:
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, CHAT)
    stub.message_update("посчитай аренду 4 H100", chat_id=CHAT, user_id=CHAT)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == CHAT, timeout=60, count=2)
    asked = [m for m in stub.messages_in(CHAT) if any(b.startswith("clar:") for b in
                                                       buttons(stub, CHAT, int(m["message_id"])))]
    assert asked, bot.log()[-3000:]
    message_id = int(asked[-1]["message_id"])
    choice = next(b for b in buttons(stub, CHAT, message_id) if b.startswith("clar:"))
    sent_before = len(stub.calls_to("sendMessage", CHAT))
    await press(stub, CHAT, message_id, choice)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == CHAT, timeout=60,
                        count=sent_before + 1)
    assert not [b for b in buttons(stub, CHAT, message_id) if b.startswith("clar:")], "its buttons are spent"
    assert "Traceback" not in bot.log(), bot.log()[-3000:]
