"""The bot against a third-party Bot API emulator (npm ``telegram-test-api``), not the project's own stub.

That server knows nine bot methods: ``sendRichMessage``, ``sendPhoto`` and ``setMyCommands`` get HTTP 500 with
a body that is not a Bot API response (JSON without ``ok``). With rich messages on (the default), /fit and
/quote must still answer, in HTML, as they do on the stub when it refuses rich messages
(tests/bot/test_rich.py), and never with the apology. The emulator runs as published; the harness fills only
what stops any aiogram bot there (tests/e2e/telegram_test_api/proxy.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from dev.telegram_stub import BotAPIError, TelegramStub, parse_html
from tests.conftest import TEST_TOKEN, BotProcess, bot_env
from tests.e2e.telegram_test_api.emulator import Emulator, unavailable
from tests.e2e.telegram_test_api.proxy import BotApiProxy

APOLOGIES = ("Sorry, something went wrong", "Извините, что-то пошло не так")
START_TIMEOUT_S = 180.0  # a cold start loads the models, as in the other e2e modules
REPLY_TIMEOUT_S = 30.0


# checked before any fixture: the session's glossary index (half a minute) is not built for a skipped test
UNAVAILABLE = unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")


@pytest.fixture
async def emulator(tmp_path: Path) -> AsyncIterator[Emulator]:
    server = Emulator(TEST_TOKEN, tmp_path / "telegram-test-api.log")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def proxy(emulator: Emulator) -> AsyncIterator[BotApiProxy]:
    server = BotApiProxy(emulator.api_url)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def bot(proxy: BotApiProxy, state_dir: Path, tmp_path: Path) -> AsyncIterator[BotProcess]:
    # bot_env reads only the server's base_url; the rest is the environment every e2e bot gets, except that
    # nothing here is generated: in "generate" mode the model's warm-up holds a stop for ~15 s
    env = bot_env(cast(TelegramStub, proxy), state_dir, TELEGRAM_RICH_MESSAGES="true", TELEGRAM_HEALTH_PORT="0",
                  LLM_ANSWER_MODE="quote")
    process = BotProcess(env, tmp_path / "bot.log")
    process.start()
    try:
        yield process
    finally:
        await process.stop()


def _diagnostics(bot: BotProcess, proxy: BotApiProxy, emulator: Emulator) -> str:
    calls = "\n".join(f"  {c.method} -> {c.status} {c.body[:160]!r}" for c in proxy.calls if c.method != "getUpdates")
    return f"\n--- calls through the proxy ---\n{calls}\n--- bot log (tail) ---\n{bot.log()[-6000:]}" \
           f"\n--- emulator log ---\n{emulator.log()[-2000:]}"


async def _ask(emulator: Emulator, text: str, chat_id: int, timeout: float = REPLY_TIMEOUT_S) -> dict[str, Any]:
    """The bot's first message after ``text``, in a chat of its own (so the first message is the answer)."""
    await emulator.send_command(text, chat_id=chat_id, user_id=chat_id, language_code="en")
    messages = await emulator.wait_bot_messages(chat_id, timeout=timeout)
    return messages[0] if messages else {}


def _problem(command: str, reply: dict[str, Any], *needles: str) -> str | None:
    """What is wrong with the reply to ``command`` (None: an HTML answer saying all of ``needles``)."""
    if not reply:
        return f"{command}: no reply"
    text = str(reply.get("text", ""))
    if any(apology in text for apology in APOLOGIES):
        return f"{command}: the apology instead of the answer: {text!r}"
    if reply.get("parse_mode") != "HTML":
        return f"{command}: not sent as HTML: {reply!r}"
    try:
        shown = parse_html(text)  # Telegram's HTML rules, as the project's stub applies them
    except BotAPIError as exc:
        return f"{command}: HTML that Telegram refuses ({exc.description}): {text!r}"
    missing = [needle for needle in needles if needle not in shown]
    return f"{command}: {missing} missing from {shown!r}" if missing else None


async def test_fit_and_quote_answer_in_html_without_rich_messages(
        emulator: Emulator, proxy: BotApiProxy, bot: BotProcess) -> None:
    start = await _ask(emulator, "/start", chat_id=9101, timeout=START_TIMEOUT_S)
    assert start, f"the bot never answered /start through telegram-test-api{_diagnostics(bot, proxy, emulator)}"

    fit_command = "/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4"
    quote_command = "/quote h100 x2 3 days"
    fit, quote = await asyncio.gather(_ask(emulator, fit_command, chat_id=9102),
                                      _ask(emulator, quote_command, chat_id=9103))
    problems = [problem for problem in (_problem("/start", start),
                                        _problem(fit_command, fit, "Fits", "KV cache", "20.00 GiB"),
                                        _problem(quote_command, quote, "430.56", "USD")) if problem]
    # the rich form was tried first and refused by this server: the HTML answers must be its fallback
    if not proxy.called("sendRichMessage"):
        problems.append("sendRichMessage was never tried: the test proves nothing about the fallback")
    if any(call.status == 200 for call in proxy.called("sendRichMessage")):
        problems.append("telegram-test-api accepted sendRichMessage: the fallback was not exercised")
    if bot.proc is None or bot.proc.poll() is not None:
        problems.append("the bot process died")
    assert not problems, "\n".join(problems) + _diagnostics(bot, proxy, emulator)
