"""/fit replies through the real Bot API stub: one captioned chart, or text and chart when it is long."""

from __future__ import annotations

import pytest
from aiogram import Bot
from aiogram.types import Message

from bot.output import fit_reply
from bot.output.charts import ChartPhotos
from dev.telegram_stub import TelegramStub, parse_html
from gpu.fit.service import FitService
from tests.conftest import fit_service

QUERY = "llama-3.1-8b q4_k_m 1xL40S"


def _message(bot: Bot, chat_id: int, chat_type: str = "private") -> Message:
    return Message.model_validate({
        "message_id": 10, "date": 0, "text": f"/fit {QUERY}",
        "chat": {"id": chat_id, "type": chat_type},
        "from": {"id": 7, "is_bot": False, "first_name": "U", "language_code": "en"}}, context={"bot": bot})


@pytest.fixture
def service() -> FitService:
    return fit_service()


async def test_a_short_breakdown_is_the_caption_of_the_chart(stub: TelegramStub, api_bot: Bot,
                                                              service: FitService,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())
    await fit_reply.send_fit(_message(api_bot, -901, "supergroup"), api_bot, service, QUERY, "en")
    [photo] = stub.calls_to("sendPhoto", -901)
    assert "Fits" in parse_html(photo.params["caption"])
    assert photo.params["reply_parameters"]["message_id"] == 10, "groups quote the question"
    assert photo.params["reply_markup"]["inline_keyboard"]
    assert not stub.calls_to("sendMessage", -901)


async def test_a_long_breakdown_goes_as_text_then_the_chart(stub: TelegramStub, api_bot: Bot, service: FitService,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())
    monkeypatch.setattr(fit_reply, "CAPTION_LIMIT", 100)
    await fit_reply.send_fit(_message(api_bot, 902), api_bot, service, QUERY, "en")
    [text] = stub.calls_to("sendMessage", 902)
    [photo] = stub.calls_to("sendPhoto", 902)
    assert "Fits" in parse_html(text.params["text"]) and text.params["reply_markup"]["inline_keyboard"]
    assert "Memory per GPU" in photo.params["caption"] and text.ts <= photo.ts


async def test_a_chart_failure_still_delivers_the_breakdown(stub: TelegramStub, api_bot: Bot, service: FitService,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_: object) -> bytes:
        raise RuntimeError("no fonts")

    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", ChartPhotos())
    monkeypatch.setattr("bot.output.charts.render_chart", broken)
    await fit_reply.send_fit(_message(api_bot, 903), api_bot, service, QUERY, "en")
    assert not stub.calls_to("sendPhoto", 903)
    [text] = stub.calls_to("sendMessage", 903)
    assert "Fits" in parse_html(text.params["text"])


async def test_a_forgotten_file_id_is_uploaded_again(stub: TelegramStub, api_bot: Bot, service: FitService,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    photos = ChartPhotos()
    monkeypatch.setattr(fit_reply, "CHART_PHOTOS", photos)
    await fit_reply.send_fit(_message(api_bot, 904), api_bot, service, QUERY, "en")
    await fit_reply.send_fit(_message(api_bot, 904), api_bot, service, QUERY, "en")
    assert stub.photo_uploads == 1, "the second reply reused the file_id"
    stub.files.clear()  # Telegram no longer knows the file
    await fit_reply.send_fit(_message(api_bot, 904), api_bot, service, QUERY, "en")
    assert stub.photo_uploads == 2 and len(stub.calls_to("sendPhoto", 904)) == 4  # one refused, then re-uploaded
