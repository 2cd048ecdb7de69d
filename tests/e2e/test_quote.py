"""/quote end to end: the bot as a real process against the Bot API stub, quotes in its SQLite file.

One-line quotes, a redelivered update and an edited message (one quote), the guided flow through
callback updates (surviving a bot restart), the /fit "quote it" button, forged buttons, /quotes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dev.telegram_stub import Call, TelegramStub
from tests.conftest import BotProcess

# the rate limiter is tested elsewhere; here it would only slow down button-mashing tests
NO_LIMITS = {"TELEGRAM_RATE_LIMIT_PER_MINUTE": "10000", "TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE": "10000",
             "TELEGRAM_HEALTH_PORT": "0"}


def quotes_in_db(state_dir: Path, owner: str) -> int:
    with sqlite3.connect(state_dir / "anchorgpu.db") as conn:
        return int(conn.execute("SELECT count(*) FROM quotes WHERE owner = ?", (owner,)).fetchone()[0])


def _to(chat_id: int) -> Callable[[Call], bool]:
    return lambda c: c.params.get("chat_id") == chat_id


def quote_message(text: str, *, chat_id: int, message_id: int, edited: bool = False,
                  language_code: str = "ru") -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_id": message_id, "date": int(time.time()),
        "chat": {"id": chat_id, "type": "private", "first_name": "Test"},
        "from": {"id": chat_id, "is_bot": False, "first_name": "Test", "language_code": language_code},
        "text": text, "entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}],
    }
    if edited:
        message["edit_date"] = int(time.time())
        return {"edited_message": message}
    return {"message": message}


async def wait_ready(stub: TelegramStub, chat_id: int) -> None:
    stub.message_update("/start", chat_id=chat_id, user_id=chat_id)
    await stub.wait_for("sendMessage", _to(chat_id), timeout=180)


async def press(stub: TelegramStub, chat_id: int, message_id: int, data: str, *, user_id: int | None = None,
                language_code: str = "ru") -> Call:
    """Press an inline button of a message the bot sent; returns the bot's answerCallbackQuery."""
    message = stub.message(chat_id, message_id)
    assert message is not None, f"no message {message_id} in chat {chat_id}"
    before = len(stub.calls_to("answerCallbackQuery"))
    stub.callback_update(data, message=message, user_id=user_id or chat_id, language_code=language_code)
    answers = await stub.wait_for("answerCallbackQuery", timeout=30, count=before + 1)
    return answers[-1]


def find_message(stub: TelegramStub, chat_id: int, needle: str) -> int:
    found = [m["message_id"] for m in stub.messages_in(chat_id) if needle in str(m.get("text", ""))]
    assert found, f"no message with {needle!r} in chat {chat_id}"
    return int(found[-1])


def buttons(stub: TelegramStub, chat_id: int, message_id: int) -> list[str]:
    message = stub.message(chat_id, message_id) or {}
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [button["callback_data"] for row in rows for button in row]


async def test_one_line_quote_answers_at_once(stub: TelegramStub, bot_factory: Callable[..., BotProcess],
                                              state_dir: Path) -> None:
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, 701)
    stub.message_update("/quote h100 x8 2 weeks", chat_id=701, user_id=701)
    stub.message_update("/quote h100 x8 1 month 2 weeks committed", chat_id=702, user_id=702,
                        language_code="en")
    stub.message_update("/quote h1000 x8 2 weeks", chat_id=703, user_id=703)
    ru = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 701 and "Q-" in c.params["text"])
    en = await stub.wait_for("sendMessage", _to(702))
    bad = await stub.wait_for("sendMessage", _to(703))
    text = ru[0].params["text"]
    assert "8\u00a0037,12 USD" in text and "336" in text and "Неделя — ровно 7 дней" in text, bot.log()[-2000:]
    assert ru[0].params.get("parse_mode") == "HTML"
    assert "Total: 19,989.44 USD" in en[0].params["text"] and "paid in full" in en[0].params["text"]
    assert "h100-sxm" in bad[0].params["text"] and "/quote" in bad[0].params["text"]

    stub.message_update("/quotes", chat_id=701, user_id=701)
    listed = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 701
                                 and "Ваши последние расчёты" in c.params["text"])
    assert text.split("</b>")[0].removeprefix("<b>Расчёт ") in listed[0].params["text"]
    assert quotes_in_db(state_dir, "tg:701") == 1


async def test_redelivered_and_edited_updates_produce_one_quote(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path) -> None:
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, 711)
    update = quote_message("/quote h100 x8 2 weeks", chat_id=711, message_id=5001)
    update_id = stub.push_update(update)
    stub.push_update(update, update_id=update_id)  # Telegram delivers the same update again
    first = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 711 and "Q-" in c.params["text"])
    quote_id = first[0].params["text"].split("</b>")[0].removeprefix("<b>Расчёт ")

    # the same update redelivered after the bot restarted (its de-duplication memory is the database)
    await bot.stop()
    bot = bot_factory(**NO_LIMITS)
    stub.push_update(update, update_id=update_id)
    await wait_ready(stub, 712)

    # an edited message keeps its message id, hence its idempotency key: a replay, or a refusal
    stub.push_update(quote_message("/quote h100 x8 2 weeks", chat_id=711, message_id=5001, edited=True))
    replay = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 711
                                 and "Повтор" in c.params["text"])
    stub.push_update(quote_message("/quote h100 x4 2 weeks", chat_id=711, message_id=5001, edited=True))
    refused = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 711
                                  and "изменённое сообщение" in c.params["text"])
    assert quote_id in replay[0].params["text"] and quote_id in refused[0].params["text"], bot.log()[-2000:]
    assert quotes_in_db(state_dir, "tg:711") == 1
    # every reply that carries a quote id carries the same one
    ids = {c.params["text"].split("</b>")[0] for c in stub.calls_to("sendMessage", 711) if "<b>Расчёт" in
           c.params["text"]}
    assert len(ids) == 1

    # an explicit key works across messages; reusing it for another configuration is refused
    stub.message_update("/quote l4 x2 3 hours key=order-2026-17", chat_id=711, user_id=711)
    stub.message_update("/quote l4 x2 3 hours key=order-2026-17", chat_id=711, user_id=711)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 711
                        and "L4" in c.params["text"], count=2)
    stub.message_update("/quote l4 x3 3 hours key=order-2026-17", chat_id=711, user_id=711)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 711
                        and "order-2026-17" in c.params["text"])
    assert quotes_in_db(state_dir, "tg:711") == 2


async def test_guided_flow_survives_a_restart(stub: TelegramStub, bot_factory: Callable[..., BotProcess],
                                              state_dir: Path) -> None:
    chat = 721
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, chat)
    stub.message_update("/quote", chat_id=chat, user_id=chat)
    flow = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat
                               and "шаг 1/5" in c.params["text"])
    msg_id = find_message(stub, chat, "шаг 1/5")
    assert "qf:g:h100-sxm" in buttons(stub, chat, msg_id), flow
    assert all(len(data.encode()) <= 64 for data in buttons(stub, chat, msg_id))

    pressed = await press(stub, chat, msg_id, "qf:g:h100-sxm")
    assert "qf:n:8" in buttons(stub, chat, msg_id), (pressed.params, bot.log()[-3000:])
    await press(stub, chat, msg_id, "qf:n:8")
    assert "qf:d:336" in buttons(stub, chat, msg_id)

    # restart in the middle of the flow: the step and the choices come back from the database
    assert await bot.stop() == 0
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, chat + 1000)
    await press(stub, chat, msg_id, "qf:d:336")
    assert "qf:p:committed" in buttons(stub, chat, msg_id), bot.log()[-2000:]
    await press(stub, chat, msg_id, "qf:p:committed")
    preview = stub.message(chat, msg_id) or {}
    assert "шаг 5/5" in preview["text"].lower() and "qf:ok:" in buttons(stub, chat, msg_id)
    await press(stub, chat, msg_id, "qf:ok:")
    final = stub.message(chat, msg_id) or {}
    assert "Расчёт Q-" in final["text"] and "оплачивается полностью" in final["text"]
    # a second tap on the (already removed) confirm button does not quote twice
    again = await press(stub, chat, msg_id, "qf:ok:")
    assert "устарела" in again.params.get("text", "")
    assert quotes_in_db(state_dir, f"tg:{chat}") == 1


async def test_fit_button_typed_duration_and_forged_buttons(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path) -> None:
    chat = 731
    bot = bot_factory(**NO_LIMITS)
    await wait_ready(stub, chat)
    start_msg = stub.messages_in(chat)[-1]

    # the /fit "quote it" button lands at the duration step
    await press(stub, chat, start_msg["message_id"], "quote:h200:4", language_code="en")
    step = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat
                               and "Step 3/5" in c.params["text"])
    assert "H200" in step[0].params["text"] and "× 4" in step[0].params["text"]
    stub.message_update("10 days", chat_id=chat, user_id=chat, language_code="en")
    pricing = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat
                                  and "Step 4/5" in c.params["text"])
    assert "10 days" in pricing[0].params["text"], bot.log()[-2000:]

    # forged, garbage and out-of-step buttons: a polite answer, no crash
    for data in ("qf:g:not-a-gpu", "qf:n:999999", "quote:h100-sxm:abc", "quote::", "qf:zzz", "qf:d:-5",
                 "qf:ok", "qf:x"):
        answer = await press(stub, chat, start_msg["message_id"], data, language_code="en")
        assert "out of date" in answer.params.get("text", ""), data
    # well-formed but impossible "quote it" buttons say what is wrong
    too_many = await press(stub, chat, start_msg["message_id"], "quote:h100-sxm:100000", language_code="en")
    assert "from 1 to 64" in too_many.params.get("text", "")
    unknown = await press(stub, chat, start_msg["message_id"], "quote:../../etc:1", language_code="en")
    assert "not for rent" in unknown.params.get("text", "")
    stub.message_update("/quote a100 x2 45 days spot", chat_id=chat, user_id=chat, language_code="en")
    done = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat and "Quote Q-" in
                               c.params["text"])
    assert "interrupted" in done[0].params["text"]
    assert quotes_in_db(state_dir, f"tg:{chat}") == 1
