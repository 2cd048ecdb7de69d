"""Team groups against the stub, the bot a real process: who gets answered, forum topics, de-duplication,
429s, rate limits, the allow-list, /settings for admins and /terms keyboards."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from dev.telegram_stub import BOT_USERNAME, Call, Fault, TelegramStub
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import group_message, running_bot

ALLOWED = [-1001, -1002, -1003, -1004, -1005, -1006, -1007]


@pytest.fixture(scope="module")
async def tg() -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    async with running_bot(TELEGRAM_ALLOWED_CHATS=str(ALLOWED), TELEGRAM_HEALTH_PORT="0") as pair:
        yield pair


async def _settle(stub: TelegramStub, seconds: float = 1.5) -> None:
    """Let the bot process everything pushed so far (negative tests need the absence of a reply)."""
    marker_chat = 999_000 + len(stub.calls)
    stub.message_update("/help", chat_id=marker_chat, user_id=marker_chat)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == marker_chat, timeout=30)
    await asyncio.sleep(seconds)


async def test_group_chatter_and_other_bots_commands_are_ignored(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    group_message(stub, "anyone tried vLLM on the H100 yet?", chat_id=-1001)
    group_message(stub, "/gpus@some_other_bot", chat_id=-1001)
    group_message(stub, "@some_other_bot what is a KV cache?", chat_id=-1001)
    group_message(stub, "thanks!", chat_id=-1001, reply_to={
        "message_id": 5, "date": 0, "chat": {"id": -1001, "type": "supergroup"}, "text": "x",
        "from": {"id": 4242, "is_bot": False, "first_name": "Colleague"}})
    await _settle(stub)
    assert not [c for c in stub.calls if c.params.get("chat_id") == -1001], bot.log()[-2000:]


async def test_addressed_messages_are_answered_in_their_forum_topic(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    group_message(stub, f"/gpus@{BOT_USERNAME}", chat_id=-1002, thread_id=11)
    gpus = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -1002, timeout=30)
    assert "H100" in gpus[0].params["text"] and gpus[0].params["message_thread_id"] == 11

    # a reply to one of our messages and an explicit mention are both questions, answered in the topic
    ours = stub.bot_messages(-1002)[-1]
    group_message(stub, "what is NVLink?", chat_id=-1002, thread_id=12, reply_to=ours)
    group_message(stub, f"@{BOT_USERNAME} what is a KV cache?", chat_id=-1002, thread_id=13)
    answered = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -1002
                                   and c.params.get("message_thread_id") in (12, 13), timeout=60, count=2)
    assert {c.params["message_thread_id"] for c in answered} == {12, 13}, bot.log()[-2000:]
    assert all(c.params.get("reply_parameters") for c in answered), "answers quote the question in groups"


async def test_a_redelivered_update_is_processed_once(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    update_id = group_message(stub, f"/gpus@{BOT_USERNAME}", chat_id=-1003)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -1003, timeout=30)
    stub.push_update({"message": {"message_id": 1, "date": 0, "text": f"/gpus@{BOT_USERNAME}",
                                  "chat": {"id": -1003, "type": "supergroup", "title": "t"},
                                  "from": {"id": 200, "is_bot": False, "first_name": "T"},
                                  "entities": [{"type": "bot_command", "offset": 0,
                                                "length": len(BOT_USERNAME) + 6}]}},
                     update_id=update_id)
    await _settle(stub)
    assert len(stub.calls_to("sendMessage", -1003)) == 1


async def test_a_429_is_waited_out_and_the_reply_still_arrives(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.inject("sendMessage", Fault(429, retry_after=1))
    group_message(stub, "/gpus", chat_id=-1004)
    calls = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -1004, timeout=30, count=2)
    assert calls[1].ts - calls[0].ts >= 0.95
    assert "H100" in calls[1].params["text"]


async def test_a_flood_from_one_user_gets_one_friendly_warning(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    for _ in range(12):
        stub.message_update("/gpus", chat_id=3001, user_id=3001, language_code="en")
    await _settle(stub, 2.0)
    texts = stub.sent_texts(3001)
    warnings = [t for t in texts if "Too many requests" in t]
    assert len(warnings) == 1, texts
    assert 3 <= len(texts) - 1 < 12


async def test_groups_outside_the_allow_list_are_ignored(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    group_message(stub, f"/gpus@{BOT_USERNAME}", chat_id=-9999)
    await _settle(stub)
    assert not stub.calls_to("sendMessage", -9999)


async def test_group_settings_are_for_admins_and_change_the_language(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    def seen(call: Call) -> bool:  # a message the chat got (not the ephemeral attempt Telegram refused)
        return call.params.get("chat_id") == -1005 and "ephemeral_message_parameters" not in call.params

    group_message(stub, f"/settings@{BOT_USERNAME}", chat_id=-1005, user_id=501, language_code="en")
    refused = await stub.wait_for("sendMessage", seen, timeout=30)
    assert "administrators" in refused[0].params["text"]
    # the refusal is for one member: tried ephemerally first (refused: the bot is no administrator here)
    assert "ephemeral_message_parameters" in stub.calls_to("sendMessage", -1005)[0].params

    stub.admins[-1005].add(502)
    group_message(stub, f"/settings@{BOT_USERNAME}", chat_id=-1005, user_id=502, language_code="en")
    menu = (await stub.wait_for("sendMessage", seen, count=2))[1]
    message = stub.bot_messages(-1005)[-1]
    assert message is not None and "Group settings" in menu.params["text"]
    russian = next(b["callback_data"] for row in menu.params["reply_markup"]["inline_keyboard"] for b in row
                   if "Русский" in b["text"])
    stub.callback_update(russian, message=message, user_id=502, language_code="en")
    await stub.wait_for("editMessageText", lambda c: c.params.get("chat_id") == -1005)
    # now an English-speaking member gets Russian in this group
    group_message(stub, "/gpus", chat_id=-1005, user_id=503, language_code="en")
    gpus = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -1005
                               and "GPU" in str(c.params.get("text")), timeout=30)
    assert "Доступные GPU" in gpus[-1].params["text"]


async def test_terms_browse_categories_and_cards(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.message_update("/terms", chat_id=3002, user_id=3002, language_code="en")
    menu = (await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 3002, timeout=30))[0]
    buttons = [b for row in menu.params["reply_markup"]["inline_keyboard"] for b in row]
    hardware = next(b for b in buttons if b["text"].startswith("Hardware"))
    message = stub.bot_messages(3002)[-1]
    stub.callback_update(hardware["callback_data"], message=message, user_id=3002, language_code="en")
    edit = (await stub.wait_for("editMessageText", lambda c: c.params.get("chat_id") == 3002))[0]
    assert "Hardware" in edit.params["text"]
    term = edit.params["reply_markup"]["inline_keyboard"][0][0]
    stub.callback_update(term["callback_data"], message=stub.bot_messages(3002)[-1], user_id=3002,
                         language_code="en")
    card = (await stub.wait_for("editMessageText", lambda c: c.params.get("chat_id") == 3002, count=2))[1]
    assert term["text"] in card.params["text"] and "Source" in card.params["text"]
    # a forged button is refused politely
    stub.callback_update("terms:term:99:0:99999", message=stub.bot_messages(3002)[-1], user_id=3002,
                         language_code="en")
    alert = await stub.wait_for("answerCallbackQuery", lambda c: c.params.get("show_alert") is True)
    assert "expired" in alert[0].params["text"]
