"""The polling journal on SQLite and PostgreSQL: store a batch, replay what was left, mark done or failed,
give up after the attempt limit, purge finished rows after the TTL."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.update_journal import DONE, FAILED, PENDING, SqlUpdateJournal
from infra.migrate import migrate


@pytest.fixture
async def engine(sql_engine: AsyncEngine) -> AsyncEngine:
    await migrate(sql_engine)
    return sql_engine


def payload(update_id: int, text: str = "/help") -> str:
    return json.dumps({"update_id": update_id, "message": {"message_id": 1, "date": 0, "text": text,
                                                           "chat": {"id": 5, "type": "private"}}})


async def test_a_batch_is_stored_once_and_its_new_ids_are_returned(engine: AsyncEngine) -> None:
    journal = SqlUpdateJournal(engine, ttl_s=3600)
    assert await journal.store([(1, payload(1)), (2, payload(2))]) == {1, 2}
    # Telegram repeats 2 (its offset was never confirmed) along with a new 3: only 3 is new
    assert await journal.store([(2, payload(2, "changed")), (3, payload(3))]) == {3}
    assert await journal.store([]) == set()
    assert await journal.status(2) == (PENDING, 1)
    replay, _ = await journal.take_unfinished()
    assert [json.loads(e.payload)["message"]["text"] for e in replay] == ["/help"] * 3  # the first copy kept


async def test_a_restart_replays_the_pending_rows_oldest_first(engine: AsyncEngine) -> None:
    killed = SqlUpdateJournal(engine, ttl_s=3600)
    await killed.store([(12, payload(12)), (10, payload(10)), (11, payload(11))])
    await killed.done(11)
    await killed.aclose()  # the lingering completion lands
    restarted = SqlUpdateJournal(engine, ttl_s=3600)
    replay, given_up = await restarted.take_unfinished()
    assert [(e.update_id, e.attempts) for e in replay] == [(10, 2), (12, 2)]
    assert json.loads(replay[0].payload)["update_id"] == 10
    assert given_up == []
    assert await restarted.status(10) == (PENDING, 2)
    assert await restarted.status(11) == (DONE, 1)
    await restarted.done(10)
    await restarted.done(12)
    await restarted.aclose()
    assert await SqlUpdateJournal(engine, ttl_s=3600).take_unfinished() == ([], [])


async def test_ids_in_flight_here_are_not_replayed(engine: AsyncEngine) -> None:
    journal = SqlUpdateJournal(engine, ttl_s=3600)
    await journal.store([(1, payload(1)), (2, payload(2))])
    replay, _ = await journal.take_unfinished(exclude={1})
    assert [e.update_id for e in replay] == [2]
    assert await journal.status(1) == (PENDING, 1)  # its attempt is not counted twice


async def test_an_update_that_keeps_killing_the_process_is_given_up(engine: AsyncEngine) -> None:
    journal = SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3)
    await journal.store([(7, payload(7)), (8, payload(8))])
    await journal.done(8)
    await journal.aclose()
    for attempts in (2, 3):  # two restarts, each killed by update 7 again
        replay, given_up = await SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3).take_unfinished()
        assert [(e.update_id, e.attempts) for e in replay] == [(7, attempts)] and given_up == []
    replay, given_up = await SqlUpdateJournal(engine, ttl_s=3600, max_attempts=3).take_unfinished()
    assert replay == [] and [(e.update_id, e.attempts) for e in given_up] == [(7, 3)]
    assert await journal.status(7) == (FAILED, 3)
    assert await journal.take_unfinished() == ([], [])


async def test_in_process_retries_count_and_fail_ends_the_update(engine: AsyncEngine) -> None:
    journal = SqlUpdateJournal(engine, ttl_s=3600)
    await journal.store([(4, payload(4))])
    assert await journal.retry(4) == 2
    assert await journal.retry(4) == 3
    await journal.fail(4)
    assert await journal.status(4) == (FAILED, 3)
    await journal.done(4)  # a late completion does not turn a failure into success
    await journal.aclose()
    assert await journal.status(4) == (FAILED, 3)


async def test_finished_rows_are_purged_after_the_ttl_and_pending_ones_kept(engine: AsyncEngine) -> None:
    journal = SqlUpdateJournal(engine, ttl_s=0.2)
    await journal.store([(1, payload(1)), (2, payload(2)), (3, payload(3))])
    await journal.done(1)
    await journal.fail(2)
    await journal.aclose()
    assert await journal.purge() == 0  # finished, but not for the TTL yet
    await asyncio.sleep(0.3)
    await journal.store([(4, payload(4))])
    await journal.done(4)
    await journal.aclose()
    assert await journal.purge() == 2
    assert await journal.status(1) is None and await journal.status(2) is None
    assert await journal.status(3) == (PENDING, 1)  # never handled: kept however old
    assert await journal.status(4) == (DONE, 1)  # finished within the TTL
