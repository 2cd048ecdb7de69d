"""The production Bot API session: JSON bodies with native values, multipart only for uploads."""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import (
    BufferedInputFile,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
)

from dev.telegram_stub import TelegramStub


async def test_requests_without_files_are_json_with_native_values(api_bot: Bot, stub: TelegramStub) -> None:
    markup = InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="Цена", callback_data="quote:h100:8")]])
    text = "<b>H100 × 8</b> — 2 недели, итого 10 752,00 $ &amp; «кавычки»"
    sent = await api_bot.send_message(42, text, reply_markup=markup, disable_notification=False)
    assert sent.message_id and sent.chat.id == 42  # the reply parsed back (orjson)
    call = stub.calls_to("sendMessage", 42)[-1]
    assert call.content_type == "application/json"
    assert call.params["text"] == text and call.params["parse_mode"] == "HTML"  # the bot's default applied
    assert call.params["reply_markup"] == {"inline_keyboard": [[{"text": "Цена", "callback_data": "quote:h100:8"}]]}
    assert call.params["disable_notification"] is False  # a false value is still sent

    stub.push_update({"inline_query": {"id": "q1", "query": "kv", "offset": "",
                                       "from": {"id": 7, "is_bot": False, "first_name": "A"}}})
    await api_bot.answer_inline_query("q1", [InlineQueryResultArticle(
        id="1", title="KV cache", input_message_content=InputTextMessageContent(message_text="<i>кэш</i>"))],
        cache_time=0)
    inline = stub.calls_to("answerInlineQuery")[-1]
    assert inline.content_type == "application/json" and inline.params["cache_time"] == 0
    assert inline.params["results"][0]["input_message_content"]["message_text"] == "<i>кэш</i>"


async def test_uploads_stay_multipart(api_bot: Bot, stub: TelegramStub) -> None:
    photo = BufferedInputFile(b"\x89PNG fake chart", filename="chart.png")
    sent = await api_bot.send_photo(42, photo, caption="<b>fits</b>")
    call = stub.calls_to("sendPhoto", 42)[-1]
    assert call.content_type == "multipart/form-data" and call.files == {next(iter(call.files)): 15}
    assert sent.photo and stub.photo_uploads == 1
    # the file_id Telegram returned is sent again as JSON, with no upload
    await api_bot.send_photo(42, sent.photo[-1].file_id, caption="again")
    assert stub.calls_to("sendPhoto", 42)[-1].content_type == "application/json" and stub.photo_uploads == 1
