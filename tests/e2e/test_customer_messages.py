"""Messages as customers write them, through the bot as a real process against the Bot API stub: a fit
question in free words, a free-text quote, a quote with a missing slot completed by a button, a greeting,
a comparison, Russian typed in Latin letters — none of them reaches the language model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from dev.telegram_stub import Call, TelegramStub, parse_html
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import running_bot


@pytest.fixture(scope="module")
async def tg() -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    # the product's default answer mode: a glossary question is answered with verbatim quotes
    async with running_bot(TELEGRAM_HEALTH_PORT="0", TELEGRAM_RATE_LIMIT_PER_MINUTE="10000",
                           TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE="10000", LLM_ANSWER_MODE="quote") as pair:
        yield pair


def _to(chat_id: int) -> Callable[[Call], bool]:
    return lambda c: c.params.get("chat_id") == chat_id


def everything_sent(stub: TelegramStub, chat_id: int) -> str:
    """The chat's messages as a person reads them: HTML texts, captions and rich messages."""
    texts = [parse_html(text) for text in stub.sent_texts(chat_id)]
    texts += [stub.rich_text(call) for call in stub.rich_calls(chat_id)]
    return "\n".join(texts).replace("\u00a0", " ").replace("\u202f", " ")  # money is grouped with NBSP


async def reply_to(stub: TelegramStub, text: str, chat_id: int, method: str = "sendMessage",
                   count: int = 1) -> str:
    stub.message_update(text, chat_id=chat_id, user_id=chat_id, language_code="ru")
    methods = ((method, count), ("sendRichMessage", 1)) if method == "sendMessage" else ((method, count),)
    await any_of(stub, chat_id, methods, f"no reply to {text!r}")
    return everything_sent(stub, chat_id)


async def any_of(stub: TelegramStub, chat_id: int, methods: tuple[tuple[str, int], ...], failure: str) -> None:
    """Until one of the methods has been called that many times for the chat: each is looked at in turn,
    briefly (waiting a whole minute for the one a reply does not use cost every such reply that minute)."""
    deadline = asyncio.get_running_loop().time() + 90
    while asyncio.get_running_loop().time() < deadline:
        for name, count in methods:
            try:
                await stub.wait_for(name, _to(chat_id), timeout=0.5, count=count)
                return
            except TimeoutError:
                continue
    raise TimeoutError(failure)


async def test_a_fit_question_in_free_words_gets_the_verdict(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    text = await reply_to(stub, "can I run deepseek-r1 671b on 8x H200?", 5101)
    assert "H200" in text and ("fits" in text.lower() or "влезет" in text.lower()), bot.log()[-2000:]
    assert not stub.calls_to("sendMessageDraft", 5101), "the language model was not involved"


async def test_a_free_text_quote_is_computed(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    text = await reply_to(stub, "сколько будет стоить 4 x A100 на 2 недели?", 5102)
    assert "2 405,76" in text or "2,405.76" in text, text + bot.log()[-2000:]
    assert "/quote a100-80gb x4" in text


async def test_a_missing_duration_is_asked_and_a_button_completes_the_quote(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, bot = tg
    await reply_to(stub, "посчитай аренду 4 H100", 5103)
    question = stub.calls_to("sendMessage", 5103)[-1]
    assert "срок" in parse_html(question.params["text"])
    buttons = [button for row in question.params["reply_markup"]["inline_keyboard"] for button in row]
    two_weeks = next(button for button in buttons if button["text"] == "2 недели")
    message = next(m for m in reversed(stub.bot_messages(5103)) if m.get("reply_markup"))
    stub.callback_update(two_weeks["callback_data"], message=message, user_id=5103, language_code="ru")
    await stub.wait_for("answerCallbackQuery", timeout=30)
    await any_of(stub, 5103, (("sendRichMessage", 1), ("sendMessage", 2)), "no quote after the button")
    text = everything_sent(stub, 5103)
    assert "4 018,56" in text or "4,018.56" in text, text + bot.log()[-3000:]  # 4 x H100 SXM x 336 h x 2.99


async def test_a_greeting_gets_what_the_bot_does(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    text = await reply_to(stub, "привет", 5104)
    assert "/help" in text and "ответа нет" not in text
    assert not stub.calls_to("sendMessageDraft", 5104)


async def test_which_gpu_is_faster_is_the_catalog_side_by_side(tg: tuple[TelegramStub, BotProcess]) -> None:
    stub, _ = tg
    text = await reply_to(stub, "что быстрее для инференса: H100 или A100?", 5105)
    assert "3,35" in text and "2,04" in text


async def test_a_follow_up_changes_the_quote_before_it(tg: tuple[TelegramStub, BotProcess]) -> None:
    """«а на месяц?» after a quote is that quote for a month, in the same chat, through the bot process."""
    stub, bot = tg
    first = await reply_to(stub, "сколько стоит 2 h100 на неделю", 5110)
    assert "1 004,64" in first or "1,004.64" in first, first + bot.log()[-2000:]  # 2 x 168 h x 2.99
    sent = len(stub.calls_to("sendMessage", 5110)) + len(stub.rich_calls(5110))
    stub.message_update("а на месяц?", chat_id=5110, user_id=5110, language_code="ru")
    for _ in range(120):
        if len(stub.calls_to("sendMessage", 5110)) + len(stub.rich_calls(5110)) > sent:
            break
        await asyncio.sleep(0.5)
    text = everything_sent(stub, 5110)
    assert "4 305,60" in text or "4,305.60" in text, text + bot.log()[-2000:]  # 2 x 720 h x 2.99


async def test_russian_typed_in_latin_letters_is_answered_as_the_console_answers_it(
        tg: tuple[TelegramStub, BotProcess]) -> None:
    # the pipeline reads «chto takoe pereobuchenie» as Russian; the answer is made from that reading, as the
    # console's and the guest front's are, not from the Latin letters (an English question, another entry)
    stub, bot = tg
    text = await reply_to(stub, "chto takoe pereobuchenie modeli?", 5107)
    assert "Overfitting" in text and "Из глоссария" in text, text + bot.log()[-2000:]
    assert "English" not in text
