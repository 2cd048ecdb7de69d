"""Stopping an answer and notices for one person (Bot API 10.3), the bot a real process on the small model.

A private answer streams as a draft with a stop button; pressing it (the stub sends the real-shaped
``stopped_message_generation``) stops the model early and the kept part arrives as a message marked as
stopped, with the queue free for the next question. In a group the placeholder carries «Стоп»: the asker's
press stops, another member's is refused ephemerally. A group flood warning is ephemeral when the bot is an
administrator and a plain reply when Telegram refuses the ephemeral message.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dev.telegram_stub import BOT_ID, BOT_USERNAME, Call, TelegramStub
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import group_message, running_bot

BUDGET = 600  # tokens: long enough that a stop lands mid-generation
QUESTION = "Why does the KV cache grow during generation?"
STOPPED = re.compile(r"answer gen:(-?\d+):(\d+) stopped by the asker after (\d+) of (\d+) tokens")


@pytest.fixture(scope="module")
async def tg() -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    async with running_bot(TELEGRAM_HEALTH_PORT="0", LLM_MAX_TOKENS=str(BUDGET)) as pair:
        yield pair


def _in(chat_id: int, **wanted: Any) -> Any:
    def match(call: Call) -> bool:
        return call.params.get("chat_id") == chat_id and all(call.params.get(k) == v for k, v in wanted.items())
    return match


def _stopped_lines(bot: BotProcess, chat_id: int) -> list[tuple[int, int]]:
    """(tokens generated, budget) of each answer of the chat that the asker stopped, from the bot's log."""
    return [(int(m[3]), int(m[4])) for m in STOPPED.finditer(bot.log()) if int(m[1]) == chat_id]


async def _wait_stopped(bot: BotProcess, chat_id: int, count: int, timeout: float = 10.0) -> list[tuple[int, int]]:
    """The log line comes just after the final message has gone out."""
    for _ in range(int(timeout * 10)):
        if len(lines := _stopped_lines(bot, chat_id)) >= count:
            return lines
        await asyncio.sleep(0.1)
    return _stopped_lines(bot, chat_id)


def _ephemeral(call: Call) -> dict[str, Any] | None:
    params = call.params.get("ephemeral_message_parameters")
    return params if isinstance(params, dict) else None


async def _settle(stub: TelegramStub, seconds: float = 1.5) -> None:
    marker = 998_000 + len(stub.calls)
    stub.message_update("/help", chat_id=marker, user_id=marker)
    await stub.wait_for("sendMessage", _in(marker), timeout=30)
    await asyncio.sleep(seconds)


async def test_a_private_answer_stops_from_the_draft_and_frees_the_queue(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    chat = 5101
    stub.message_update(QUESTION, chat_id=chat, user_id=chat, language_code="en")
    # the model has started writing ("Writing the answer…" or verified text): the draft has its stop button
    await stub.wait_for("sendMessageDraft", lambda c: _in(chat, can_stop=True)(c)
                        and "queue" not in str(c.params.get("text")), timeout=240)
    pressed = time.monotonic()
    stub.press_draft_stop(chat)
    final = (await stub.wait_for("sendMessage", _in(chat), timeout=60))[0]
    assert final.ts - pressed < 15, "the stop was not acted on promptly"
    assert "Answer stopped" in final.params["text"], final.params["text"]
    drafts = stub.calls_to("sendMessageDraft", chat)
    assert all(d.params.get("can_stop") is True and d.params.get("keep_on_stop") is True for d in drafts)
    assert not [d for d in drafts if d.ts > final.ts], "no draft after the final message"
    # the model stopped computing early: the answerer's own count, far under the budget
    [(tokens, budget)] = await _wait_stopped(bot, chat, 1)
    assert budget == BUDGET and tokens < BUDGET // 2, bot.log()[-2000:]

    # the slot is free: the next question is not queued behind the stopped one
    before = len(stub.calls_to("sendMessageDraft", chat))
    stub.message_update("What does NVLink connect?", chat_id=chat, user_id=chat, language_code="en")
    started = await stub.wait_for("sendMessageDraft", _in(chat, can_stop=True), count=before + 1, timeout=240)
    assert "queue" not in str(started[before].params.get("text")), started[before].params
    stub.press_draft_stop(chat)
    await stub.wait_for("sendMessage", _in(chat), count=2, timeout=120)
    assert len(await _wait_stopped(bot, chat, 2)) == 2


def _stop_button(message: dict[str, Any] | None) -> dict[str, Any] | None:
    rows = ((message or {}).get("reply_markup") or {}).get("inline_keyboard") or []
    return next((b for row in rows for b in row if str(b.get("callback_data", "")).startswith("stopa:")), None)


async def test_group_stop_button_is_the_askers_and_refused_ephemerally_to_others(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    group, asker, other = -2101, 6101, 6102
    group_message(stub, f"@{BOT_USERNAME} {QUESTION.lower()}", chat_id=group, user_id=asker, language_code="en")
    placeholder = await stub.wait_for("sendMessage", lambda c: _in(group)(c) and _stop_button(c.params) is not None,
                                      timeout=240)
    assert not stub.calls_to("sendMessageDraft", group), "no drafts in groups"
    button = _stop_button(placeholder[0].params)
    assert button is not None and button["style"] == "danger" and button["text"] == "⏹ Stop"
    message_id = next(m["message_id"] for m in stub.bot_messages(group) if _stop_button(m))

    stub.callback_update(button["callback_data"], message=stub.message(group, message_id) or {}, user_id=other,
                         language_code="en")
    refusal = (await stub.wait_for("sendMessage", lambda c: (_ephemeral(c) or {}).get("receiver_user_id") == other,
                                   timeout=30))[0]
    assert "Only the person who asked" in refusal.params["text"]
    assert (_ephemeral(refusal) or {}).get("callback_query_id"), "a button's notice names the press"
    [shown] = stub.ephemeral_to(other, group)
    assert shown["message_id"] == 0 and shown["ephemeral_message_id"] and shown["receiver_user"]["id"] == other
    assert not _stopped_lines(bot, group), "another member's press stopped nothing"

    stub.callback_update(button["callback_data"], message=stub.message(group, message_id) or {}, user_id=asker,
                         language_code="en")
    final = await stub.wait_for("editMessageText", lambda c: _in(group, message_id=message_id)(c)
                                and "Answer stopped" in str(c.params.get("text")), timeout=60)
    assert _stop_button(final[-1].params) is None
    assert _stop_button(stub.message(group, message_id)) is None, "the button went with the stream"
    [(tokens, budget)] = await _wait_stopped(bot, group, 1)
    assert tokens < budget // 2


async def _flood(stub: TelegramStub, group: int, user: int) -> list[Call]:
    for _ in range(12):
        group_message(stub, "/gpus", chat_id=group, user_id=user, language_code="en")
    await _settle(stub, 2.0)
    return [c for c in stub.calls_to("sendMessage", group) if "Too many requests" in str(c.params.get("text"))]


async def test_a_group_flood_warning_is_ephemeral_when_the_bot_is_an_admin(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    group, user = -2102, 6201
    stub.admins[group].add(BOT_ID)
    warnings = await _flood(stub, group, user)
    assert len(warnings) == 1, [c.params for c in warnings]
    options = _ephemeral(warnings[0])
    assert options is not None and options["receiver_user_id"] == user and not options.get("callback_query_id")
    [shown] = stub.ephemeral_to(user, group)
    assert "Too many requests" in shown["text"] and shown["message_id"] == 0
    answers = [c for c in stub.calls_to("sendMessage", group) if "H100" in str(c.params.get("text"))]
    assert answers and not [c for c in answers if _ephemeral(c)], "ordinary answers stay ordinary"


async def test_a_refused_ephemeral_warning_falls_back_to_a_reply(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    group, user = -2103, 6301  # the bot is not an administrator here: Telegram refuses the ephemeral message
    warnings = await _flood(stub, group, user)
    assert [bool(_ephemeral(c)) for c in warnings] == [True, False], [c.params for c in warnings]
    assert not stub.ephemeral_to(user, group)
    reply = warnings[1].params
    assert reply.get("reply_parameters", {}).get("message_id"), "the fallback quotes the flooder's message"
    assert any("Too many requests" in str(m.get("text")) for m in stub.bot_messages(group))
