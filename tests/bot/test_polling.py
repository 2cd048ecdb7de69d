"""The journaled polling loop in process, against the Bot API stub: an update is journaled before its offset
is confirmed, a restart finishes what was left exactly once, a failing update is given up after the
attempt limit, and with the journal down an update is confirmed only after it was handled."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiogram import Bot, Dispatcher, Router
from aiogram.filters import Command
from aiogram.types import Message
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.dedupe import DedupeMiddleware
from bot.delivery.dedupe_store import SqlUpdateClaims
from bot.delivery.polling import JournaledPolling
from bot.delivery.update_journal import DONE, FAILED, PENDING, SqlUpdateJournal
from dev.telegram_stub import TelegramStub
from infra.db import create_engine
from infra.migrate import migrate

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    await migrate(engine)
    yield engine
    await engine.dispose()


class Handlers:
    """/help answers at once; /slow waits for :attr:`gate`; /boom raises past every middleware."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered: list[int] = []
        self.booms = 0

    def dispatcher(self, claims: SqlUpdateClaims) -> Dispatcher:
        dispatcher = Dispatcher()
        dispatcher.update.outer_middleware(DedupeMiddleware(claims))
        router = Router()

        @router.message(Command("help"))
        async def help_(message: Message) -> None:
            await message.answer("help")

        @router.message(Command("slow"))
        async def slow(message: Message) -> None:
            self.entered.append(message.chat.id)
            await self.gate.wait()
            await message.answer("slow done")

        @router.message(Command("boom"))
        async def boom(message: Message) -> None:
            self.booms += 1
            raise RuntimeError("this update always fails")

        dispatcher.include_router(router)
        return dispatcher


async def until(condition: Callable[[], bool | Awaitable[bool]], timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = condition()
        if result if isinstance(result, bool) else await result:
            return
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


def start(dispatcher: Dispatcher, bot: Bot, journal: SqlUpdateJournal,
          **options: float | bool) -> tuple[JournaledPolling, asyncio.Task[None]]:
    runner = JournaledPolling(dispatcher, bot, journal, polling_timeout=1, **options)  # type: ignore[arg-type]
    return runner, asyncio.create_task(runner.run(handle_signals=False, close_bot_session=False))


async def test_updates_are_journaled_before_confirmed_and_a_restart_finishes_them_once(
        stub: TelegramStub, api_bot: Bot, engine: AsyncEngine) -> None:
    handlers = Handlers()
    journal = SqlUpdateJournal(engine, ttl_s=3600)
    runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot, journal,
                         shutdown_grace_s=0.2)
    chats = list(range(501, 506))
    ids = [stub.message_update("/slow", chat_id=chat, user_id=chat) for chat in chats]
    await until(lambda: sorted(handlers.entered) == chats)
    await until(lambda: not stub.unconfirmed())  # Telegram has forgotten them: only the journal has them
    assert [await journal.status(i) for i in ids] == [(PENDING, 1)] * 5
    runner.stop()  # SIGTERM with every update still in flight past the grace period
    await task
    assert not stub.calls_to("sendMessage")

    handlers.gate.set()
    restarted = SqlUpdateJournal(engine, ttl_s=3600)
    runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot, restarted)
    await stub.wait_for("sendMessage", count=5)
    for update_id in ids:
        await until(lambda update_id=update_id: _is(restarted, update_id, (DONE, 2)))  # type: ignore[misc]
    stub.push_update({"message": {"message_id": 9, "date": 0, "text": "/help", "chat": {"id": 501, "type": "private"},
                                  "entities": [{"type": "bot_command", "offset": 0, "length": 5}]}},
                     update_id=ids[0])  # a late redelivery of a finished update
    stub.message_update("/help", chat_id=600, user_id=600)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 600)
    runner.stop()
    await task
    assert {chat: len(stub.calls_to("sendMessage", chat)) for chat in chats} == dict.fromkeys(chats, 1)


async def _is(journal: SqlUpdateJournal, update_id: int, expected: tuple[str, int]) -> bool:
    return await journal.status(update_id) == expected


async def test_an_update_answered_before_the_crash_is_not_answered_again(
        stub: TelegramStub, api_bot: Bot, engine: AsyncEngine) -> None:
    """Killed after the reply, before the journal row was marked done: the replay meets a done claim."""
    handlers = Handlers()
    dead_claims = SqlUpdateClaims(engine, ttl_s=3600)
    journal = SqlUpdateJournal(engine, ttl_s=3600)
    await journal.store([(41, '{"update_id": 41, "message": {"message_id": 1, "date": 0, "text": "/help", '
                               '"chat": {"id": 700, "type": "private"}, '
                               '"entities": [{"type": "bot_command", "offset": 0, "length": 5}]}}')])
    assert await dead_claims.claim(41)
    await dead_claims.complete(41)
    await dead_claims.aclose()
    runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot, journal)
    await until(lambda: _is(journal, 41, (DONE, 2)))
    runner.stop()
    await task
    assert not stub.calls_to("sendMessage", 700)


async def test_with_the_claims_in_the_journal_db_a_new_update_is_claimed_by_its_journal_row(
        stub: TelegramStub, api_bot: Bot, engine: AsyncEngine) -> None:
    """No claim on the reply path (the new journal row is the claim); done is recorded for replays, and a
    failing new update is retried through the usual claims."""
    handlers = Handlers()
    claims = SqlUpdateClaims(engine, ttl_s=3600)
    journal = SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3)
    runner, task = start(handlers.dispatcher(claims), api_bot, journal, retry_delay_s=0.01,
                         claims_in_journal_db=True)
    slow = stub.message_update("/slow", chat_id=811, user_id=811)
    await until(lambda: handlers.entered == [811])
    assert await claims.seen(slow) is None, "no claim row while it is handled"
    handlers.gate.set()
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 811)
    await until(lambda: _is(journal, slow, (DONE, 1)))
    await until(lambda: claims_status(claims, slow, DONE))
    boom = stub.message_update("/boom", chat_id=812, user_id=812)
    await until(lambda: _is(journal, boom, (FAILED, 3)))
    assert handlers.booms == 3 and await claims.seen(boom) is None  # each failed attempt let go of its claim
    runner.stop()
    await task

    # killed after the reply, before the journal row was marked done: the replay meets the recorded done
    await journal.store([(821, '{"update_id": 821, "message": {"message_id": 1, "date": 0, "text": "/help", '
                                '"chat": {"id": 821, "type": "private"}, '
                                '"entities": [{"type": "bot_command", "offset": 0, "length": 5}]}}')])
    await claims.record_done(821)
    runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot,
                         SqlUpdateJournal(engine, ttl_s=3600), claims_in_journal_db=True)
    await until(lambda: _is(journal, 821, (DONE, 2)))
    runner.stop()
    await task
    await claims.aclose()
    assert not stub.calls_to("sendMessage", 821) and len(stub.calls_to("sendMessage", 811)) == 1


async def claims_status(claims: SqlUpdateClaims, update_id: int, expected: str) -> bool:
    return await claims.seen(update_id) == expected


async def test_an_update_that_keeps_failing_is_given_up_after_the_attempt_limit(
        stub: TelegramStub, api_bot: Bot, engine: AsyncEngine, caplog: pytest.LogCaptureFixture) -> None:
    handlers = Handlers()
    journal = SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3)
    runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot, journal,
                         retry_delay_s=0.01)
    with caplog.at_level(logging.ERROR, logger="bot.delivery.polling"):
        boom = stub.message_update("/boom", chat_id=801, user_id=801)
        await until(lambda: _is(journal, boom, (FAILED, 3)))
        stub.message_update("/help", chat_id=802, user_id=802)  # the loop goes on
        await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 802)
    runner.stop()
    await task
    assert handlers.booms == 3
    assert any(f"update {boom} failed 3 times: giving up" in r.getMessage() for r in caplog.records)
    replay, _ = await SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3).take_unfinished()
    assert replay == []  # a restart does not try it again


async def test_with_the_journal_down_an_update_is_confirmed_only_after_it_was_handled(
        stub: TelegramStub, api_bot: Bot, engine: AsyncEngine, tmp_path: Path) -> None:
    broken = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'never-migrated.db'}")  # no journal table
    handlers = Handlers()
    try:
        runner, task = start(handlers.dispatcher(SqlUpdateClaims(engine, ttl_s=3600)), api_bot,
                             SqlUpdateJournal(broken, ttl_s=3600))
        slow = stub.message_update("/slow", chat_id=901, user_id=901)
        await until(lambda: handlers.entered == [901])
        await asyncio.sleep(1.5)  # longer than a long poll: no getUpdates has confirmed it meanwhile
        assert stub.unconfirmed() == [slow]
        handlers.gate.set()
        await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 901)
        stub.message_update("/help", chat_id=902, user_id=902)
        await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 902)
        assert slow not in stub.unconfirmed()
        runner.stop()
        await task
    finally:
        await broken.dispose()
    assert len(stub.calls_to("sendMessage", 901)) == 1
