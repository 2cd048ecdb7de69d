"""The one retry policy (bot/transport/retry.py) through the real Bot API stub: a failing call is tried
RetryPolicy.attempts times in all — a final message, a handler's own send, a 429, a 5xx, a dropped
connection — never the product of two stacked retry loops."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.exceptions import TelegramNetworkError, TelegramRetryAfter, TelegramServerError

from bot.output.streaming import Target, send_html
from bot.transport.retry import RetryPolicy, final_send
from bot.transport.session import telegram_session
from dev.telegram_stub import Fault, TelegramStub
from tests.conftest import TEST_TOKEN

POLICY = RetryPolicy(backoff_s=0.01)
CHAT = 701
TARGET = Target(chat_id=CHAT, thread_id=None, reply_to_message_id=None, is_private=True)


@pytest.fixture
async def fast_bot(stub: TelegramStub) -> AsyncIterator[Bot]:
    bot = Bot(TEST_TOKEN, session=telegram_session(stub.base_url, POLICY),
              default=DefaultBotProperties(parse_mode="HTML"))
    try:
        yield bot
    finally:
        await bot.session.close()


def test_the_default_policy_is_a_few_tries() -> None:
    assert RetryPolicy().attempts == 4


async def test_a_final_message_over_a_dropped_connection_is_tried_attempts_times(stub: TelegramStub,
                                                                                 fast_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(drop_connection=True), times=50)
    with pytest.raises(TelegramNetworkError):
        await send_html(fast_bot, TARGET, "<b>answer</b>")
    assert len(stub.calls_to("sendMessage", CHAT)) == POLICY.attempts


async def test_a_handlers_send_on_a_5xx_is_tried_attempts_times(stub: TelegramStub, fast_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(502, description="Bad Gateway"), times=50)
    with pytest.raises(TelegramServerError):
        await fast_bot.send_message(CHAT, "reply")
    assert len(stub.calls_to("sendMessage", CHAT)) == POLICY.attempts


async def test_a_final_message_under_flood_control_is_tried_attempts_times(stub: TelegramStub,
                                                                           fast_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(429, retry_after=1), times=50)
    with pytest.raises(TelegramRetryAfter):
        await send_html(fast_bot, TARGET, "answer")
    calls = stub.calls_to("sendMessage", CHAT)
    assert len(calls) == POLICY.attempts
    assert all(b.ts - a.ts >= 0.95 for a, b in itertools.pairwise(calls)), "retry_after waited out"


async def test_a_recovered_send_arrives_once(stub: TelegramStub, fast_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(500), times=POLICY.attempts - 1)
    sent = await send_html(fast_bot, TARGET, "answer")
    assert len(sent) == 1 and len(stub.calls_to("sendMessage", CHAT)) == POLICY.attempts


async def test_a_preview_edit_under_flood_control_is_not_retried_but_a_final_edit_is(stub: TelegramStub,
                                                                                    fast_bot: Bot) -> None:
    message = await fast_bot.send_message(CHAT, "placeholder")
    stub.inject("editMessageText", Fault(429, retry_after=1))
    with pytest.raises(TelegramRetryAfter):
        await fast_bot.edit_message_text("preview", chat_id=CHAT, message_id=message.message_id)
    assert len(stub.calls_to("editMessageText", CHAT)) == 1
    stub.inject("editMessageText", Fault(429, retry_after=1))
    await final_send(lambda: fast_bot.edit_message_text("final", chat_id=CHAT, message_id=message.message_id))
    assert len(stub.calls_to("editMessageText", CHAT)) == 3
