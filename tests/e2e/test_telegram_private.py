"""Private chats and inline mode against the stub, the bot a real process on the small model: a question
streams as drafts then arrives as one final message with sources; a VRAM question goes to /fit;
/stop cancels; inline queries return glossary cards without the LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from dev.telegram_stub import TelegramStub, parse_html
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import running_bot


@pytest.fixture(scope="module")
async def tg() -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    async with running_bot(TELEGRAM_HEALTH_PORT="0", LLM_MAX_TOKENS="40") as pair:
        yield pair


async def test_a_question_streams_drafts_then_one_final_message(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    stub.message_update("Why does the KV cache grow during generation?", chat_id=4001, user_id=4001, language_code="en")
    final = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 4001, timeout=240)
    await asyncio.sleep(1.0)
    assert len(stub.calls_to("sendMessage", 4001)) == 1, "exactly one final message"
    text = final[0].params["text"]
    plain = parse_html(text)  # valid Telegram HTML
    assert "Sources" in plain and "KV" in plain, bot.log()[-2000:]
    drafts = stub.calls_to("sendMessageDraft", 4001)
    assert drafts, "the answer was streamed as drafts first"
    assert all(d.ts <= final[0].ts for d in drafts)
    assert len({d.params["draft_id"] for d in drafts}) == 1
    assert stub.calls_to("sendChatAction", 4001)
    assert not stub.calls_to("editMessageText", 4001), "no edits in private chats"


async def test_a_vram_question_in_plain_chat_goes_to_fit(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.message_update("влезет ли mixtral в две A100?", chat_id=4002, user_id=4002, language_code="ru")
    calls = await stub.wait_for("sendPhoto", lambda c: c.params.get("chat_id") == 4002, timeout=60)
    assert "A100" in str(calls[0].params.get("caption")) + " ".join(stub.sent_texts(4002))
    assert not stub.calls_to("sendMessageDraft", 4002), "the LLM was not involved"


async def test_inline_query_returns_glossary_cards(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.inline_update("kv cache", user_id=4004, language_code="en")
    answer = (await stub.wait_for("answerInlineQuery", timeout=30))[-1]
    results = answer.params["results"]
    assert results and any("KV" in r["title"] for r in results)
    card = results[0]["input_message_content"]["message_text"]
    assert parse_html(card).startswith(results[0]["title"]) and "Source" in parse_html(card)
    assert len({r["id"] for r in results}) == len(results)

    stub.inline_update("zzqx qwv", user_id=4004, language_code="en")
    empty = await stub.wait_for("answerInlineQuery", count=2, timeout=30)
    assert empty[-1].params["results"] == []
