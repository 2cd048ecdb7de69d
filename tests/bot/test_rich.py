"""Rich table replies (bot/output/rich.py) through the real Bot API stub: blocks in Telegram's shapes, split under
the documented limits, and the HTML fallback when the server refuses the method or one chat refuses them."""

from __future__ import annotations

import orjson
import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.exceptions import TelegramServerError
from aiogram.methods import SendRichMessage
from aiogram.types import BufferedInputFile, InlineKeyboardButton, InlineKeyboardMarkup, InputRichMessage, Message

from app.views.table import Report, Table, Text, render_report
from bot.output import fit_reply
from bot.output.charts import ChartPhotos
from bot.output.rich import RichReplies, SendRichTable, blocks_json, send_report, to_blocks
from bot.output.rich_split import MAX_COLUMNS, split_report
from bot.output.streaming import Target, reply_parameters
from bot.transport.retry import RetryPolicy
from bot.transport.session import JsonBodySession, telegram_session
from dev.telegram_stub import (
    RICH_MAX_BLOCKS,
    BotAPIError,
    Fault,
    TelegramStub,
    _RichBlockCount,
    parse_html,
    rich_tables,
)
from infra.markup import HTML
from tests.conftest import TEST_TOKEN, fit_service


def _json(report: Report) -> list[dict]:  # type: ignore[type-arg]
    return InputRichMessage(blocks=to_blocks(report)).model_dump(mode="json", exclude_none=True)["blocks"]


def _private_message(bot: Bot, chat_id: int, text: str) -> Message:
    return Message.model_validate({
        "message_id": 10, "date": 0, "text": text, "chat": {"id": chat_id, "type": "private"},
        "from": {"id": chat_id, "is_bot": False, "first_name": "U", "language_code": "en"}}, context={"bot": bot})


def _counted(report: Report) -> _RichBlockCount:
    count = _RichBlockCount()
    count.walk(_json(report))  # the stub's validation: align/valign, ≤ 20 columns, depth
    return count


def _table(rows: int, columns: int = 3, width: int = 4) -> Table:
    return Table(headers=tuple(f"h{c}" for c in range(columns)),
                 rows=tuple(tuple(f"{r:0{width}d}"[:width] for _ in range(columns)) for r in range(rows)),
                 align=("left",) + ("right",) * (columns - 1), caption="caption", total=("Σ",) * columns)


def test_blocks_have_header_cells_alignment_and_a_caption() -> None:
    report = Report("Title", (Text("verdict", bold=True), _table(2), Text("a note", note=True)))
    blocks = _json(report)
    assert [b["type"] for b in blocks] == ["heading", "paragraph", "table", "paragraph"]
    [cells] = rich_tables(blocks)
    assert all(cell["is_header"] for cell in cells[0]) and all(cell["is_header"] for cell in cells[-1])
    assert not any(cell.get("is_header") for cell in cells[1])
    assert {cell["align"] for cell in cells[1]} == {"left", "right"} and cells[1][0]["valign"] == "middle"
    assert blocks[2]["caption"] == {"type": "bold", "text": "caption"}
    assert _counted(report).blocks == 4 + 4  # 4 blocks, and the table's 4 rows count as blocks


def test_the_hot_path_json_is_exactly_aiogram_s_models() -> None:
    for report in (Report("Title", (Text("verdict", bold=True), _table(3), Text("plain"), Text("n", note=True))),
                   Report("", (Table(headers=("a", ""), rows=(("", "x"),)),))):
        assert blocks_json(report) == _json(report)


def test_the_hot_path_request_body_is_the_one_aiogram_would_send(api_bot: Bot) -> None:
    blocks = blocks_json(Report("Title", (Text("verdict", bold=True), _table(3))))
    fields = {"chat_id": 7, "rich_message": InputRichMessage.model_construct(blocks=blocks),
              "message_thread_id": 5, "reply_parameters": reply_parameters(3),
              "reply_markup": InlineKeyboardMarkup(inline_keyboard=[[
                  InlineKeyboardButton(text="Quote", callback_data="quote:h100-sxm:2")]])}
    session = JsonBodySession()
    fast = session.json_body(api_bot, SendRichTable.model_construct(**fields))
    generic = session.json_body(api_bot, SendRichMessage.model_construct(**fields))
    assert fast is not None and generic is not None and orjson.loads(fast) == orjson.loads(generic)
    # a chart to upload goes the general way, as multipart
    upload = {"type": "photo", "photo": {"type": "photo", "media": BufferedInputFile(b"png", "fit.png")}}
    fields["rich_message"] = InputRichMessage.model_construct(blocks=[*blocks, upload])
    assert session.json_body(api_bot, SendRichTable.model_construct(**fields)) is None


def test_a_long_table_is_split_under_500_blocks_with_its_header_repeated() -> None:
    report = Report("Long", (Text("before"), _table(1200)))
    parts = split_report(report, "en")
    assert len(parts) == 3
    for part in parts:
        assert _counted(part).blocks <= RICH_MAX_BLOCKS
        for table in part.tables():
            assert table.headers == ("h0", "h1", "h2")
    rows = [row for part in parts for table in part.tables() for row in table.rows]
    assert rows == list(_table(1200).rows), "every row once, in order"
    totals = [table.total for part in parts for table in part.tables()]
    assert totals[:-1] == [None] * (len(totals) - 1) and totals[-1] == ("Σ",) * 3
    assert parts[0].title == "Long" and not parts[1].title


def test_the_character_limit_splits_too() -> None:
    report = Report("Wide", (_table(40, columns=4, width=400),))  # 40 rows × 1600 chars: 64,000 in all
    parts = split_report(report, "en")
    assert len(parts) >= 2
    assert all(_counted(part).chars <= 32_768 for part in parts)
    assert sum(len(t.rows) for p in parts for t in p.tables()) == 40


def test_too_many_rows_for_the_message_budget_are_cut_with_a_note() -> None:
    parts = split_report(Report("Huge", (_table(5000),)), "en")
    assert len(parts) == 4
    shown = sum(len(t.rows) for p in parts for t in p.tables())
    last = parts[-1].blocks[-1]
    assert isinstance(last, Text) and f"first {shown} rows of 5000" in last.text
    assert all(_counted(part).blocks <= RICH_MAX_BLOCKS for part in parts)


def test_columns_past_twenty_are_dropped_with_a_note() -> None:
    [part] = split_report(Report("Many columns", (_table(3, columns=25),)), "ru")
    [table] = part.tables()
    assert len(table.headers) == MAX_COLUMNS and all(len(row) == MAX_COLUMNS for row in table.rows)
    assert isinstance(part.blocks[-1], Text) and "20" in part.blocks[-1].text and "25" in part.blocks[-1].text
    _counted(part)  # the stub refuses a 21st column; this passes


def test_the_stub_refuses_what_telegram_refuses() -> None:
    count = _RichBlockCount()
    with pytest.raises(BotAPIError, match="align and valign"):
        count.walk([{"type": "table", "cells": [[{"align": "left", "text": "x"}]]}])
    with pytest.raises(BotAPIError, match="COLUMNS"):
        count.walk([{"type": "table", "cells": [[{"align": "left", "valign": "top"}] * 21]}])


def test_html_of_a_report_is_valid_telegram_html() -> None:
    text = render_report(Report("<T>", (Text("a & b", bold=True), _table(2))), HTML)
    assert parse_html(text).startswith("<T>") and "h0 · h1 · h2" in parse_html(text)


def _target(chat_id: int) -> Target:
    return Target(chat_id=chat_id, thread_id=None, reply_to_message_id=None, is_private=chat_id > 0)


async def test_send_report_goes_rich_and_falls_back_to_html(stub: TelegramStub, api_bot: Bot) -> None:
    stub.rich_messages = True
    rich = RichReplies(enabled=True)
    report = Report("Title", (_table(3),))
    sent = await send_report(api_bot, _target(11), report, "<b>html</b>", lang="en", rich=rich)
    assert isinstance(sent[0], Message) and sent[0].rich_message is not None  # the reply parses as a Message
    assert len(stub.rich_calls(11)) == 1 and not stub.calls_to("sendMessage", 11)
    assert "h0 | h1 | h2" in stub.rich_text(stub.rich_calls(11)[0])

    stub.refuse_rich = 1  # one chat refuses: HTML there, and that chat is not asked again
    await send_report(api_bot, _target(12), report, "<b>html</b>", lang="en", rich=rich)
    await send_report(api_bot, _target(12), report, "<b>html</b>", lang="en", rich=rich)
    assert len(stub.rich_calls(12)) == 1 and [c.params["text"] for c in stub.calls_to("sendMessage", 12)] == [
        "<b>html</b>", "<b>html</b>"]
    await send_report(api_bot, _target(13), report, "<b>html</b>", lang="en", rich=rich)
    assert len(stub.rich_calls(13)) == 1 and not stub.calls_to("sendMessage", 13), "other chats still rich"

    off = RichReplies(enabled=False)  # TELEGRAM_RICH_MESSAGES=false
    await send_report(api_bot, _target(14), report, "<b>html</b>", lang="en", rich=off)
    assert not stub.rich_calls(14) and stub.calls_to("sendMessage", 14)


@pytest.mark.parametrize("fault", [
    Fault(status=500, raw_body="<html><body>Internal Server Error</body></html>"),  # e.g. an emulator
    Fault(status=502, description="Bad Gateway"),  # a proxy in front of the server
    Fault(status=200, raw_body="not json"),  # a body that is no Bot API response
    Fault(drop_connection=True),  # nothing came back
], ids=["500-not-json", "502", "200-not-json", "dropped"])
async def test_any_failure_of_a_rich_send_falls_back_to_html_and_is_remembered_for_a_while(
        stub: TelegramStub, fault: Fault) -> None:
    stub.rich_messages = True
    stub.inject("sendRichMessage", fault)
    session = telegram_session(stub.base_url, RetryPolicy(backoff_s=0.01))  # as the bot runs: 5xx retried, not this
    bot = Bot(TEST_TOKEN, session=session, default=DefaultBotProperties(parse_mode="HTML"))
    rich = RichReplies(enabled=True, server_refused_ttl_s=60)
    try:
        for chat in (41, 42):
            await send_report(bot, _target(chat), Report("T", (_table(1),)), "<i>fallback</i>", lang="en", rich=rich)
    finally:
        await bot.session.close()
    assert len(stub.rich_calls()) == 1, "one try, then the server is not asked again for a while"
    assert [c.params["text"] for c in stub.calls_to("sendMessage")] == ["<i>fallback</i>"] * 2
    assert not rich.method_missing and not rich.usable(43)
    rich.server_refused_ttl_s = 0.0
    rich.refused(44, TelegramServerError(method=SendRichMessage.model_construct(), message="again"))
    assert rich.usable(45), "after the while, rich messages are tried again"


async def test_a_server_without_the_method_is_asked_once(stub: TelegramStub, api_bot: Bot) -> None:
    rich = RichReplies(enabled=True)  # the stub's default: sendRichMessage is 404 Not Found
    for chat in (21, 22):
        await send_report(api_bot, _target(chat), Report("T", (_table(1),)), "<i>fallback</i>", lang="en",
                          rich=rich)
    assert len(stub.rich_calls()) == 1 and rich.method_missing
    assert [c.params["text"] for c in stub.calls_to("sendMessage")] == ["<i>fallback</i>"] * 2


async def test_a_split_reply_refused_half_way_goes_on_in_html(stub: TelegramStub, api_bot: Bot) -> None:
    stub.rich_messages = True
    rich = RichReplies(enabled=True)

    report = Report("Long", (_table(700),))
    original = stub._m_sendRichMessage

    async def once_then_refuse(params: dict) -> dict:  # type: ignore[type-arg]
        if len(stub.rich_calls()) >= 2:
            raise BotAPIError(400, "Bad Request: RICH_MESSAGE_INVALID")
        return await original(params)

    stub._m_sendRichMessage = once_then_refuse  # type: ignore[method-assign]
    sent = await send_report(api_bot, _target(31), report, "<b>whole html</b>", lang="en", rich=rich)
    texts = [c.params["text"] for c in stub.calls_to("sendMessage", 31)]
    assert len(stub.rich_calls(31)) == 2 and sent[0].rich_message is not None
    assert texts and "whole html" not in "".join(texts), "only the rest, not the whole reply again"
    assert "0699" in parse_html("".join(texts)) and "0000" not in parse_html("".join(texts))


async def test_fit_in_rich_mode_is_one_message_with_the_tables_and_the_chart(
        stub: TelegramStub, api_bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.rich_messages = True
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())
    message = _private_message(api_bot, 41, "/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4")
    request = "llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4"
    await fit_reply.send_fit(message, api_bot, fit_service(), request, "en", rich=RichReplies(enabled=True))
    [table] = stub.rich_calls(41)
    assert not stub.calls_to("sendPhoto", 41) and not stub.calls_to("sendMessage", 41)
    shown = stub.rich_text(table)
    assert "KV cache | 20.00 | 40.00" in shown and "Fits" in shown, shown
    buttons = [b["callback_data"] for row in table.params["reply_markup"]["inline_keyboard"] for b in row]
    assert "quote:h100-sxm:2" in buttons
    [photo] = [b for b in table.params["rich_message"]["blocks"] if b["type"] == "photo"]
    assert table.params["rich_message"]["blocks"][-1] is photo, "the chart ends the message"
    assert str(photo["photo"]["media"]).startswith("attach://") and table.files, "the chart was uploaded with it"
    assert "Llama" in photo["caption"]["text"] and stub.photo_uploads == 1

    # the same configuration again: one message that refers to the uploaded chart, no second upload
    await fit_reply.send_fit(message, api_bot, fit_service(), request, "en", rich=RichReplies(enabled=True))
    again = stub.rich_calls(41)[-1]
    [photo] = [b for b in again.params["rich_message"]["blocks"] if b["type"] == "photo"]
    assert photo["photo"]["media"] == "photo-1" and not again.files and stub.photo_uploads == 1


async def test_fit_in_rich_mode_uploads_the_chart_again_when_telegram_forgot_it(
        stub: TelegramStub, api_bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.rich_messages = True
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())
    message = _private_message(api_bot, 43, "/fit llama-3.1-8b q4_k_m 1xL40S")
    rich = RichReplies(enabled=True)
    await fit_reply.send_fit(message, api_bot, fit_service(), "llama-3.1-8b q4_k_m 1xL40S", "en", rich=rich)
    stub.files.clear()  # Telegram no longer knows the file_id the bot remembered
    await fit_reply.send_fit(message, api_bot, fit_service(), "llama-3.1-8b q4_k_m 1xL40S", "en", rich=rich)
    calls = stub.rich_calls(43)
    assert len(calls) == 3 and stub.photo_uploads == 2, "refused once for the stale id, then uploaded again"
    assert calls[-1].files and rich.usable(43), "a forgotten file is no reason to stop rich replies here"
    assert not stub.calls_to("sendPhoto", 43) and not stub.calls_to("sendMessage", 43)


async def test_fit_without_the_method_is_the_captioned_chart_of_before(stub: TelegramStub, api_bot: Bot,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())  # the stub's default: no sendRichMessage
    message = _private_message(api_bot, 42, "/fit llama-3.1-8b q4_k_m 1xL40S")
    await fit_reply.send_fit(message, api_bot, fit_service(), "llama-3.1-8b q4_k_m 1xL40S", "en",
                              rich=RichReplies(enabled=True))
    [photo] = stub.calls_to("sendPhoto", 42)
    assert len(stub.rich_calls(42)) == 1 and not stub.calls_to("sendMessage", 42)
    assert "Fits" in str(photo.params["caption"]) and photo.params.get("reply_markup")
