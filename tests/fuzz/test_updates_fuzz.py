"""Fuzzing whole updates through the real dispatcher: commands with random arguments and forged callback data.

The dispatcher is the production one (``bot.factory.create_dispatcher``: every middleware and router) with the
quote store on SQLite; the Bot talks HTTP to the Telegram stub, which rejects invalid HTML and texts over
4096 characters. "Unhandled" means the error boundary had to catch something: its logger must stay silent.
Question answering is left out (no model): the hostile suite covers it on a real process.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aiogram import Bot, Dispatcher
from aiogram.types import Update
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.services import Services
from bot.delivery.dedupe_store import SqlUpdateClaims
from bot.factory import BotRuntime, create_bot, create_dispatcher
from bot.health import HealthChecks
from bot.preferences import PreferenceStore
from dev.telegram_stub import TelegramStub
from infra.migrate import migrate
from infra.settings import DataSettings, DBSettings, Settings, TelegramSettings
from tests.conftest import TEST_TOKEN

T = TypeVar("T")
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Harness:
    """A dispatcher on its own event loop thread, so that sync hypothesis tests can drive it."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.stub = TelegramStub()
        self.ids = itertools.count(10_000)
        self.bot: Bot | None = None
        self.dispatcher: Dispatcher | None = None
        self.runtime: BotRuntime | None = None

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self.thread.start()
        self.run(self._start())

    async def _start(self) -> None:
        await self.stub.start()
        settings = Settings(
            data=DataSettings(state_dir=self.state),
            telegram=TelegramSettings(bot_token=TEST_TOKEN, api_base=self.stub.base_url,  # type: ignore[arg-type]
                                      rate_limit_per_minute=1_000_000, chat_rate_limit_per_minute=1_000_000,
                                      health_port=0),
            db=DBSettings(url=f"sqlite+aiosqlite:///{self.state / 'fuzz.db'}"))
        services = Services.create(settings)
        engine = services.engine
        await migrate(engine)
        self.runtime = BotRuntime(services=services, claims=SqlUpdateClaims(engine, 3600.0),
                                  preferences=PreferenceStore(engine), health=HealthChecks(services))
        self.bot = create_bot(settings)
        self.dispatcher = create_dispatcher(settings, self.runtime)

    def stop(self) -> None:
        async def _stop() -> None:
            if self.bot is not None:
                await self.bot.session.close()
            if self.runtime is not None:
                await self.runtime.services.engine.dispose()  # type: ignore[union-attr]
            await self.stub.stop()

        self.run(_stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def feed(self, payload: dict[str, Any]) -> None:
        async def _feed() -> None:
            assert self.bot is not None and self.dispatcher is not None
            update = Update.model_validate({"update_id": next(self.ids), **payload}, context={"bot": self.bot})
            await self.dispatcher.feed_update(self.bot, update)

        self.run(_feed())

    def message(self, text: str, chat_id: int = 501, user_id: int = 501, chat_type: str = "private") -> None:
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type != "private":
            chat["title"] = "Fuzz group"
        entities = []
        if text.startswith("/"):
            entities.append({"type": "bot_command", "offset": 0,
                             "length": len(text.split()[0].encode("utf-16-le")) // 2 if text.split() else 1})
        self.feed({"message": {"message_id": next(self.ids), "date": int(time.time()), "chat": chat, "text": text,
                               "from": {"id": user_id, "is_bot": False, "first_name": "F", "language_code": "en"},
                               **({"entities": entities} if entities else {})}})

    def callback(self, data: str, message_id: int, chat_id: int = 501, user_id: int = 501) -> None:
        message = {"message_id": message_id, "date": int(time.time()), "text": "x",
                   "chat": {"id": chat_id, "type": "private"},
                   "from": {"id": 7000000001, "is_bot": True, "first_name": "AnchorGPU"}}
        self.feed({"callback_query": {"id": str(next(self.ids)), "chat_instance": "ci", "data": data,
                                      "message": message,
                                      "from": {"id": user_id, "is_bot": False, "first_name": "F",
                                               "language_code": "ru"}}})

    def bot_message_id(self, latest: bool, chat_id: int = 501) -> int:
        """A message the bot really sent (Telegram attaches the real message; only the data is forged)."""
        messages = self.stub.bot_messages(chat_id)
        if not messages:
            self.message("/start", chat_id=chat_id, user_id=chat_id)
            messages = self.stub.bot_messages(chat_id)
        return int(messages[-1 if latest else 0]["message_id"])


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    errors = ErrorLog()
    logging.getLogger("bot.errors").addHandler(errors)
    h = Harness(tmp_path_factory.mktemp("fuzz-dispatch"))
    h.start()
    h.errors = errors  # type: ignore[attr-defined]
    try:
        yield h
    finally:
        h.stop()
        logging.getLogger("bot.errors").removeHandler(errors)


def _assert_no_unhandled(harness: Harness) -> None:
    records = harness.errors.records  # type: ignore[attr-defined]
    assert not records, [r.getMessage() + repr(r.exc_info[1] if r.exc_info else None) for r in records]


CALLBACK_PREFIXES = ["qf:g:", "qf:n:", "qf:d:", "qf:p:", "qf:ok", "qf:x", "quote:", "quote:h100-sxm:",
                     "set:lang:", "set:len:", "terms:", "t:", "", "qf:n:¹", "qf:d:-1", "qf:n:99999999999999999999"]


@st.composite
def callback_data(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(CALLBACK_PREFIXES))
    tail = draw(st.one_of(ANY_TEXT, st.sampled_from(["h100-sxm", "8", "0", "168", "spot", "on-demand",
                                                     "committed", "ru", "en", "short", ":::", "h100-sxm:8"])))
    data = prefix + tail
    while len(data.encode()) > 64:  # Telegram never delivers more than 64 bytes
        data = data[:-1]
    return data or "x"


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["/quote", "none"]), callback_data(), st.booleans()), min_size=1,
                max_size=6))
def test_forged_callback_data_never_crashes(harness: Harness, steps: list[tuple[str, str, bool]]) -> None:
    """Random button presses, on the live flow message or on old ones, with or without a flow started."""
    harness.errors.records.clear()  # type: ignore[attr-defined]
    for start, data, on_current in steps:
        if start == "/quote":
            harness.message("/quote")
        message_id = harness.bot_message_id(latest=on_current)
        harness.callback(data, message_id)
    _assert_no_unhandled(harness)


@FUZZ
@given(st.sampled_from(["/fit", "/quote", "/quotes", "/gpus", "/terms", "/settings", "/start", "/help",
                        "/fit@anchorgpu_test_bot", "/stop", "/nonexistent"]),
       st.one_of(ANY_TEXT, st.text(alphabet="h100x8 2weksmonthsday<>&\"'", max_size=80)),
       st.sampled_from(["private", "supergroup"]))
def test_commands_with_random_arguments_never_crash(harness: Harness, command: str, args: str,
                                                   chat_type: str) -> None:
    harness.errors.records.clear()  # type: ignore[attr-defined]
    chat_id = 502 if chat_type == "private" else -100502
    before = len(harness.stub.calls)
    harness.message(f"{command} {args}".strip(), chat_id=chat_id, user_id=502, chat_type=chat_type)
    _assert_no_unhandled(harness)
    if command in ("/fit", "/quote", "/quotes", "/gpus", "/start") and args.strip() and command != "/quote":
        # every known command answers something (usage, a result or an explanation)
        sent = [c for c in harness.stub.calls[before:] if c.method in ("sendMessage", "sendPhoto")]
        assert sent, f"no reply to {command} {args!r}"
