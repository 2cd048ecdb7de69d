"""Streaming through the real Bot API stub: drafts privately, paced edits in groups, 429s, long answers."""

from __future__ import annotations

import asyncio
import itertools
import time

from aiogram import Bot

from app.views.answer import render_answer
from bot.output.streaming import AnswerStream, ChatPacer, Target, send_html
from dev.telegram_stub import Fault, TelegramStub, parse_html, visible_length
from infra.markup import HTML, escape
from tests.app.test_views import entry

PRIVATE = Target(chat_id=301, thread_id=None, reply_to_message_id=None, is_private=True)


async def _stream_words(stream: AnswerStream, words: int, delay: float) -> None:
    for index in range(words):
        stream.delta(f"word{index} ")
        await asyncio.sleep(delay)


async def test_private_answer_streams_drafts_then_one_final_message(stub: TelegramStub, api_bot: Bot) -> None:
    pacer = ChatPacer(draft_interval_s=0.1)
    async with AnswerStream(api_bot, PRIVATE, "en", pacer) as stream:
        stream.queued(2)
        await asyncio.sleep(0.15)
        await _stream_words(stream, 30, 0.02)
        await asyncio.sleep(0.15)
        sent = await stream.finish(render_answer(stream.text, [entry("KV cache", "s1")], "en", HTML))

    drafts = stub.calls_to("sendMessageDraft", 301)
    assert len(drafts) >= 3, drafts
    assert "number 2 in the queue" in drafts[0].params["text"]
    assert len({d.params["draft_id"] for d in drafts}) == 1 and drafts[0].params["draft_id"] != 0
    texts = [d.params["text"] for d in drafts]
    assert len(texts) == len(set(texts)), "no identical consecutive previews"
    assert stub.calls_to("sendChatAction", 301)[0].params["action"] == "typing"
    finals = stub.calls_to("sendMessage", 301)
    assert len(finals) == 1 and len(sent) == 1
    assert "word29" in finals[0].params["text"] and "KV cache" in finals[0].params["text"]
    assert not stub.calls_to("editMessageText", 301)


async def test_group_answer_edits_a_placeholder_at_a_bounded_rate(stub: TelegramStub, api_bot: Bot) -> None:
    target = Target(chat_id=-1001, thread_id=77, reply_to_message_id=5, is_private=False)
    pacer = ChatPacer(group_interval_s=0.5)
    started = time.monotonic()
    async with AnswerStream(api_bot, target, "ru", pacer) as stream:
        await _stream_words(stream, 60, 0.03)  # ~1.8 s of tokens
        await stream.finish(escape(stream.text))
    elapsed = time.monotonic() - started

    sends = stub.calls_to("sendMessage", -1001)
    edits = stub.calls_to("editMessageText", -1001)
    assert len(sends) == 1, "one placeholder, then only edits"
    assert sends[0].params["message_thread_id"] == 77
    assert sends[0].params["reply_parameters"]["message_id"] == 5
    previews = [sends[0], *edits[:-1]]
    gaps = [b.ts - a.ts for a, b in itertools.pairwise(previews)]
    assert all(gap >= 0.45 for gap in gaps), gaps
    assert len(previews) <= elapsed / 0.5 + 2
    message = stub.message(-1001, sends[0].params and 1000)
    assert message is not None and "word59" in message["text"]


async def test_retry_after_is_honoured_for_the_final_message(stub: TelegramStub, api_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(429, retry_after=1))
    started = time.monotonic()
    sent = await send_html(api_bot, PRIVATE, "<b>final</b> answer")
    calls = stub.calls_to("sendMessage", 301)
    assert len(calls) == 2 and len(sent) == 1
    assert calls[1].ts - calls[0].ts >= 0.95
    assert time.monotonic() - started >= 0.95


async def test_preview_429_pauses_previews_without_losing_the_answer(stub: TelegramStub, api_bot: Bot) -> None:
    target = Target(chat_id=-1002, thread_id=None, reply_to_message_id=None, is_private=False)
    stub.inject("editMessageText", Fault(429, retry_after=1))
    async with AnswerStream(api_bot, target, "en", ChatPacer(group_interval_s=0.1)) as stream:
        await _stream_words(stream, 40, 0.03)
        await stream.finish(escape(stream.text))
    edits = stub.calls_to("editMessageText", -1002)
    assert edits[0].ts + 0.95 <= edits[1].ts, "nothing sent to the chat during retry_after"
    final = stub.message(-1002, 1000)
    assert final is not None and final["text"].rstrip().endswith("word39")


async def test_nine_thousand_character_answer_arrives_whole_in_valid_chunks(stub: TelegramStub,
                                                                             api_bot: Bot) -> None:
    paragraph = "KV cache <grows> with context & batch; GQA shrinks it. " * 10
    answer = "\n\n".join(f"{i}. {paragraph}" for i in range(17))
    assert len(answer) > 9000
    html_text = render_answer(answer, [entry("KV cache", "https://example.com/kv")], "en", HTML)
    async with AnswerStream(api_bot, PRIVATE, "en", ChatPacer()) as stream:
        stream.delta(answer[:5000])
        await asyncio.sleep(0.1)
        sent = await stream.finish(html_text)
    texts = stub.sent_texts(301)
    assert len(sent) == len(texts) == 3
    for text in texts:
        assert visible_length(text, "HTML") <= 4096
    joined = "".join(parse_html(text) for text in texts)
    assert joined.replace(" ", "").replace("\n", "") == parse_html(html_text).replace(" ", "").replace("\n", "")
    drafts = stub.calls_to("sendMessageDraft", 301)
    assert all(visible_length(d.params["text"], None) <= 4096 for d in drafts)


async def test_markup_rejected_by_telegram_falls_back_to_plain_text(stub: TelegramStub, api_bot: Bot) -> None:
    stub.inject("sendMessage", Fault(400, description="Bad Request: can't parse entities: unsupported tag"))
    sent = await send_html(api_bot, PRIVATE, "<b>bold</b> &lt;tag&gt;")
    calls = stub.calls_to("sendMessage", 301)
    assert len(sent) == 1 and len(calls) == 2
    assert calls[1].params["text"] == "bold <tag>" and "parse_mode" not in calls[1].params
