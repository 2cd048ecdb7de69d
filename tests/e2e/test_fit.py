"""/fit end to end: the bot as a real process against the Bot API stub.

A command answered with one message: the chart (sendPhoto with a PNG, uploaded once and then resent by
its file_id) captioned with the breakdown and the "quote it" button; a Russian plain-chat
question routed to the fit engine; "did you mean" for a typo; hostile HTML escaped; the button opens the
/quote flow (callback data `quote:{gpu_id}:{count}`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from dev.telegram_stub import Call, TelegramStub
from tests.conftest import SMALL_MODEL as SMALL_GGUF
from tests.conftest import BotProcess


def _to(chat_id: int) -> Callable[[Call], bool]:
    return lambda c: c.params.get("chat_id") == chat_id


async def test_fit_in_telegram(stub: TelegramStub, bot_factory: Callable[..., BotProcess]) -> None:
    bot = bot_factory()
    stub.message_update("/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4", chat_id=701, user_id=701,
                        language_code="en")
    photos = await stub.wait_for("sendPhoto", _to(701), timeout=180)
    text = photos[0].params["caption"]
    assert "Fits" in text and "KV cache" in text and "20.00 GiB" in text, bot.log()
    markup = photos[0].params["reply_markup"]
    data = [button["callback_data"] for row in markup["inline_keyboard"] for button in row]
    assert "quote:h100-sxm:2" in data
    assert all(d.startswith("quote:") and len(d.encode()) <= 64 for d in data)
    attached = str(photos[0].params["photo"]).removeprefix("attach://")
    assert photos[0].files.get(attached, 0) > 1000  # a real PNG was uploaded as multipart
    assert not stub.calls_to("sendMessage", 701), "one message: the chart carries the breakdown"
    # the same picture again is not uploaded again: Telegram's file_id is reused
    uploads = stub.photo_uploads
    stub.message_update("/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4", chat_id=701, user_id=701,
                        language_code="en")
    again = await stub.wait_for("sendPhoto", _to(701), timeout=60, count=2)
    assert str(again[1].params["photo"]).startswith("photo-") and stub.photo_uploads == uploads

    # plain Russian question in a private chat goes to the fit engine, not the glossary
    stub.message_update("влезет ли mixtral в две A100?", chat_id=702, user_id=702, language_code="ru")
    answer = await stub.wait_for("sendPhoto", _to(702), timeout=60)
    assert "Mixtral 8x7B" in answer[0].params["caption"] and "Помещается" in answer[0].params["caption"]

    # a typo gets suggestions; hostile markup is escaped (the stub rejects broken HTML)
    stub.message_update("/fit lama-3.1-70b on h100", chat_id=703, user_id=703, language_code="en")
    typo = await stub.wait_for("sendMessage", _to(703), timeout=60)
    assert "llama-3.1-70b" in typo[0].params["text"] and "Did you mean" in typo[0].params["text"]
    stub.message_update("/fit <b>qwen2.5-7b</b> & <script> on 4090", chat_id=704, user_id=704,
                        language_code="en")
    hostile = await stub.wait_for("sendPhoto", _to(704), timeout=60)
    assert "Qwen2.5 7B" in hostile[0].params["caption"] and "<script>" not in hostile[0].params["caption"]
    stub.message_update("/fit <i>nosuchmodel</i> on 4090", chat_id=705, user_id=705, language_code="en")
    error = await stub.wait_for("sendMessage", _to(705), timeout=60)
    assert "nosuchmodel" in error[0].params["text"] and "<i>" not in error[0].params["text"]

    # the button enters the /quote flow
    message_id = next(m["message_id"] for m in stub.messages_in(701) if "Fits" in str(m.get("caption", "")))
    message = stub.message(701, message_id)
    assert message is not None
    stub.callback_update("quote:h100-sxm:2", message=message, user_id=701, language_code="en")
    await stub.wait_for("answerCallbackQuery", timeout=60)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 701 and "h100" in
                        str(c.params.get("text", "")).lower() and "Fits" not in str(c.params.get("text")),
                        timeout=60)

    # uploads: a Hugging Face config.json (private chat), a broken one, and the head of a GGUF file
    config = {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 128256, "intermediate_size": 8192, "tie_word_embeddings": True,
              "_name_or_path": "my-org/tiny-llama"}
    stub.document_update(json.dumps(config).encode(), "config.json", caption="on l4 ctx=8k", chat_id=706,
                         user_id=706, language_code="en")
    uploaded = await stub.wait_for("sendPhoto", _to(706), timeout=60)
    assert "my-org/tiny-llama" in uploaded[0].params["caption"] and "Fits" in uploaded[0].params["caption"]
    stub.document_update(b"{broken", "config.json", chat_id=707, user_id=707, language_code="en")
    broken = await stub.wait_for("sendMessage", _to(707), timeout=60)
    assert "not valid JSON" in broken[0].params["text"]
    if SMALL_GGUF.exists():
        with SMALL_GGUF.open("rb") as handle:
            head = handle.read(4 * 2**20)
        stub.document_update(head, "smollm2.gguf", caption="/fit on 4090", chat_id=-708, user_id=708,
                             chat_type="supergroup", language_code="en")
        gguf = await stub.wait_for("sendPhoto", _to(-708), timeout=60)
        assert "GGUF header" in gguf[0].params["caption"] and "Q4_1" in gguf[0].params["caption"]

    assert await bot.stop() == 0, bot.log()
    assert "Traceback" not in bot.log()
