"""Bot API 10.x end to end, the bot a real process against the stub speaking 10.3: rich tables for /fit (with
the chart), /quote, /gpus and /placements; the HTML fallback when sendRichMessage is refused or switched off;
guest-mode answers (glossary question, /fit, /quote without renting); private-chat topics keeping separate
histories, and /new clearing one (or opening a new topic)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from dev.telegram_stub import Call, TelegramStub, parse_html, rich_tables
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import running_bot

NO_LIMITS = {"TELEGRAM_RATE_LIMIT_PER_MINUTE": "10000", "TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE": "10000",
             "TELEGRAM_HEALTH_PORT": "0", "LLM_MAX_TOKENS": "40"}


def _bot_10_3(stub: TelegramStub) -> None:
    stub.rich_messages = True
    stub.bot_user.update(has_topics_enabled=True, supports_guest_queries=True)


@pytest.fixture(scope="module")
async def tg() -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    async with running_bot(configure=_bot_10_3, **NO_LIMITS) as pair:
        yield pair


def _to(chat_id: int) -> Callable[[Call], bool]:
    return lambda c: c.params.get("chat_id") == chat_id


def _buttons(call: Call) -> list[str]:
    markup = call.params.get("reply_markup") or {}
    return [b.get("callback_data", "") for row in markup.get("inline_keyboard", []) for b in row]


def _db(bot: BotProcess) -> Path:
    return Path(bot.env["DB_URL"].split("///", 1)[1])


def _turns(bot: BotProcess, key: str) -> list[tuple[str, str]]:
    with sqlite3.connect(_db(bot)) as conn:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT role, content FROM conversation_turns WHERE key = ? ORDER BY id", (key,))]


async def test_fit_in_a_dm_is_a_rich_table_with_the_chart(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    stub.message_update("/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4", chat_id=5101, user_id=5101,
                        language_code="en")
    [table] = await stub.wait_for("sendRichMessage", _to(5101), timeout=120)
    [memory, cheapest] = rich_tables(table.params["rich_message"]["blocks"])
    assert [c["text"] for c in memory[0]] == ["What takes memory", "GiB per GPU", "GiB in all"]
    assert all(c["is_header"] and c["align"] and c["valign"] for c in memory[0] + memory[-1])
    shown = stub.rich_text(table)
    assert "KV cache | 20.00 | 40.00" in shown and "✅ Fits" in shown, shown
    assert "quote:h100-sxm:2" in _buttons(table)
    assert cheapest[0][0]["text"] == "GPU" and len(cheapest) > 1
    # the chart in the same message, after the tables (one message, as the HTML reply was one captioned chart)
    photo = table.params["rich_message"]["blocks"][-1]
    assert photo["type"] == "photo" and "Llama" in photo["caption"]["text"]
    assert table.files, "the chart was uploaded with the message"
    assert not stub.calls_to("sendMessage", 5101), "no HTML copy of the table"
    assert not stub.calls_to("sendPhoto", 5101), "no second message for the chart"
    # the message Telegram returned parsed (the bot went on to the chart): the stored one is a rich message
    assert any("rich_message" in m for m in stub.messages_in(5101)), bot.log()[-2000:]


async def test_quote_gpus_and_placements_are_rich(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    chat = 5102
    stub.message_update("/quote h100 x8 1 week committed", chat_id=chat, user_id=chat, language_code="en")
    [quote] = await stub.wait_for("sendRichMessage", _to(chat), timeout=60)
    lines = rich_tables(quote.params["rich_message"]["blocks"])[0]
    assert [c["text"] for c in lines[0]] == ["Item", "Hours", "Unit price", "Amount"]
    assert lines[-1][0]["text"] == "Total" and lines[-1][-1]["text"].endswith("USD")
    rent = next(data for data in _buttons(quote) if data.startswith("rent:Q-"))

    stub.message_update("/gpus", chat_id=chat, user_id=chat, language_code="en")
    gpus = await stub.wait_for("sendRichMessage", _to(chat), count=2, timeout=60)
    [catalog] = rich_tables(gpus[1].params["rich_message"]["blocks"])
    assert catalog[0][0]["is_header"] and len(catalog) > 5 and "h100-sxm" in stub.rich_text(gpus[1])

    # rent from the rich quote's button, then /placements lists it as a table
    quote_message = next(m for m in stub.messages_in(chat) if "rich_message" in m)
    stub.callback_update(rent, message=quote_message, user_id=chat, language_code="en")
    confirm = await stub.wait_for("sendMessage", lambda c: _to(chat)(c) and "rentc:1:" in " ".join(_buttons(c)),
                                  timeout=60)
    confirm_message = stub.message(chat, max(m["message_id"] for m in stub.messages_in(chat)))
    assert confirm_message is not None
    yes = next(data for data in _buttons(confirm[0]) if data.startswith("rentc:1:"))
    stub.callback_update(yes, message=confirm_message, user_id=chat, language_code="en")
    await stub.wait_for("answerCallbackQuery", count=2, timeout=60)
    stub.message_update("/placements", chat_id=chat, user_id=chat, language_code="en")
    listed = await stub.wait_for("sendRichMessage", _to(chat), count=3, timeout=60)
    [placements] = rich_tables(listed[2].params["rich_message"]["blocks"])
    assert placements[0][0]["text"] == "Placement" and placements[1][0]["text"].startswith("P-"), bot.log()[-3000:]
    assert any(data.startswith("pl:") for data in _buttons(listed[2])), "the placement buttons come along"


async def test_a_refused_rich_message_falls_back_to_html(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.refuse_rich = 1
    stub.message_update("/gpus", chat_id=5103, user_id=5103, language_code="en")
    [html] = await stub.wait_for("sendMessage", _to(5103), timeout=60)
    assert "Available GPUs" in parse_html(html.params["text"]) and len(stub.rich_calls(5103)) == 1
    # the chat that refused is not asked again; others still get tables
    stub.message_update("/gpus", chat_id=5103, user_id=5103, language_code="en")
    await stub.wait_for("sendMessage", _to(5103), count=2, timeout=60)
    assert len(stub.rich_calls(5103)) == 1
    stub.message_update("/gpus", chat_id=5104, user_id=5104, language_code="en")
    await stub.wait_for("sendRichMessage", _to(5104), timeout=60)


async def test_a_guest_question_is_answered_with_one_article(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    mention = "@" + stub.bot_user["username"]
    asked = stub.guest_message_update(f"{mention} what is a KV cache?", user_id=5201, language_code="en")
    await stub.wait_for("answerGuestQuery", lambda c: c.params.get("guest_query_id") == asked, timeout=240)
    post = stub.guest_posts[-1]
    assert post["guest_bot_caller_user"]["id"] == 5201 and post["chat"]["id"] == -900
    text = parse_html(str(post["text"]))
    assert "KV" in text and ("Sources" in text or "Source" in text), text
    assert post["result"]["type"] == "article" and post["result"]["title"]

    fitted = stub.guest_message_update(f"{mention} /fit qwen2.5-7b on 4090", user_id=5202, language_code="en")
    await stub.wait_for("answerGuestQuery", lambda c: c.params.get("guest_query_id") == fitted, timeout=60)
    assert "Qwen2.5 7B" in parse_html(str(stub.guest_posts[-1]["text"]))

    priced = stub.guest_message_update(f"{mention} /quote h100 x8 2 weeks", user_id=5203, language_code="en")
    await stub.wait_for("answerGuestQuery", lambda c: c.params.get("guest_query_id") == priced, timeout=60)
    post = stub.guest_posts[-1]
    assert "USD" in parse_html(str(post["text"])) and "private chat" in parse_html(str(post["text"]))
    assert "reply_markup" not in post["result"], "nothing to rent from a guest chat"
    with sqlite3.connect(_db(bot)) as conn:
        assert conn.execute("SELECT count(*) FROM quotes WHERE owner = 'tg:5203'").fetchone()[0] == 0
    assert not stub.calls_to("sendMessage", -900), "a guest never writes to the chat by itself"
    assert "Traceback" not in bot.log()


async def test_two_private_topics_keep_separate_histories_and_new_clears_one(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    chat = 5301
    topic_a, topic_b = 77, 78
    stub.message_update("что такое H200?", chat_id=chat, user_id=chat, thread_id=topic_a)
    await stub.wait_for("sendMessage", lambda c: _to(chat)(c) and c.params.get("message_thread_id") == topic_a,
                        timeout=240)
    stub.message_update("что такое A100?", chat_id=chat, user_id=chat, thread_id=topic_b)
    await stub.wait_for("sendMessage", lambda c: _to(chat)(c) and c.params.get("message_thread_id") == topic_b,
                        timeout=240)
    await asyncio.sleep(0.5)
    assert [turn[1] for turn in _turns(bot, f"{chat}:{topic_a}") if turn[0] == "user"] == ["что такое H200?"]
    assert [turn[1] for turn in _turns(bot, f"{chat}:{topic_b}") if turn[0] == "user"] == ["что такое A100?"]
    assert not _turns(bot, str(chat)), "nothing under the chat without a topic"

    # a follow-up takes its GPU from its own topic's history
    for topic, own, other in ((topic_a, "H200", "A100"), (topic_b, "A100", "H200")):
        before = len(stub.calls_to("sendMessage", chat))
        stub.message_update("а какая у неё пропускная способность?", chat_id=chat, user_id=chat, thread_id=topic)
        replies = await stub.wait_for("sendMessage", _to(chat), count=before + 1, timeout=120)
        reply = replies[-1]
        assert reply.params.get("message_thread_id") == topic
        assert own in reply.params["text"] and other not in reply.params["text"], reply.params["text"]

    # a spec reply is history too, and a second follow-up still means the topic's GPU
    before = len(stub.calls_to("sendMessage", chat))
    stub.message_update("а сколько у неё памяти?", chat_id=chat, user_id=chat, thread_id=topic_a)
    reply = (await stub.wait_for("sendMessage", _to(chat), count=before + 1, timeout=120))[-1]
    assert "H200" in reply.params["text"] and "141" in reply.params["text"], reply.params["text"]
    await asyncio.sleep(0.5)
    assert [turn[1] for turn in _turns(bot, f"{chat}:{topic_a}") if turn[0] == "user"] == [
        "что такое H200?", "а какая у неё пропускная способность?", "а сколько у неё памяти?"]

    # /new in topic A forgets A only
    stub.message_update("/new", chat_id=chat, user_id=chat, thread_id=topic_a)
    done = await stub.wait_for("sendMessage", lambda c: _to(chat)(c) and "Начат новый разговор" in
                               str(c.params.get("text")), timeout=60)
    assert done[0].params.get("message_thread_id") == topic_a
    assert _turns(bot, f"{chat}:{topic_a}") == [] and _turns(bot, f"{chat}:{topic_b}")
    assert not stub.calls_to("createForumTopic"), "inside a topic /new does not open another"


async def test_new_outside_a_topic_opens_one(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    chat = 5302
    stub.message_update("/new", chat_id=chat, user_id=chat, language_code="en")
    [created] = await stub.wait_for("createForumTopic", _to(chat), timeout=60)
    assert created.params["name"] == "New conversation"
    [greeting] = await stub.wait_for("sendMessage", _to(chat), timeout=60)
    thread_id = greeting.params.get("message_thread_id")
    assert thread_id in stub.topics[chat] and thread_id != 1


async def test_general_topic_replies_carry_no_thread_id(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    stub.message_update("/gpus", chat_id=-5303, user_id=5303, chat_type="supergroup", thread_id=1,
                        language_code="en")
    [reply] = await stub.wait_for("sendRichMessage", _to(-5303), timeout=60)
    assert "message_thread_id" not in reply.params, "General (thread 1) is addressed without an id"


async def test_rich_messages_switched_off(stub: TelegramStub, bot_factory: Callable[..., BotProcess]) -> None:
    stub.rich_messages = True
    bot = bot_factory(TELEGRAM_RICH_MESSAGES="false", **NO_LIMITS)
    stub.message_update("/quote h100 x8 2 weeks", chat_id=5401, user_id=5401, language_code="en")
    [html] = await stub.wait_for("sendMessage", _to(5401), timeout=240)
    assert "Total" in parse_html(html.params["text"]) and any(d.startswith("rent:") for d in _buttons(html))
    assert not stub.rich_calls(), "the setting is off: no rich call at all"
    assert await bot.stop() == 0, bot.log()
