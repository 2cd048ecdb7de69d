"""Answer jobs on both engines: a question is owned by one replica, a stale one is taken over by exactly
one sweeper, a live owner keeps it, and the sweeper delivers one answer into the chat (Bot API stub)."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from aiogram import Bot
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.answer_jobs import DONE, FAILED, RUNNING, AnswerJob, AnswerJobs
from bot.delivery.answer_recovery import AnswerJobSweeper
from dev.telegram_stub import TelegramStub, parse_html
from infra.migrate import migrate
from infra.settings import AnswerJobSettings

FAST = AnswerJobSettings(heartbeat_s=0.1, stale_s=0.4, sweep_interval_s=0.1, max_attempts=3)
MESSAGES = itertools.count(500)


def question(chat_id: int = 42, *, private: bool = True, text: str = "why does HBM matter?") -> AnswerJob:
    message_id = next(MESSAGES)
    return AnswerJob(chat_id=chat_id, message_id=message_id, thread_id=None, user_id=7, is_private=private,
                     reply_to_message_id=None if private else message_id, question=text, lang="en")


@pytest.fixture
async def engine(sql_engine: AsyncEngine) -> AsyncEngine:
    await migrate(sql_engine)
    return sql_engine


def replica(engine: AsyncEngine, name: str, settings: AnswerJobSettings = FAST) -> AnswerJobs:
    return AnswerJobs(engine, settings, owner=name)


async def test_a_question_has_one_owner(engine: AsyncEngine) -> None:
    a, b = replica(engine, "a"), replica(engine, "b")
    job = question()
    assert await a.open(job)
    assert not await b.open(job), "a redelivered question is not answered by a second replica"
    assert not await a.open(job), "nor twice by the same one"
    assert await a.finish(job.id)
    assert await a.state_of(job.id) == (DONE, "a", 1)
    await asyncio.sleep(0.5)
    assert not await b.open(job), "an answered question stays answered"
    assert await b.take_stale() == []


async def test_a_stale_job_is_taken_over_by_exactly_one_of_two_sweepers(engine: AsyncEngine) -> None:
    dead, b, c = replica(engine, "dead"), replica(engine, "b"), replica(engine, "c")
    job = question()
    assert await dead.open(job)
    assert await b.take_stale() == [], "a fresh heartbeat is not stale"
    await asyncio.sleep(0.5)  # the owner was killed: no heartbeat
    taken = await asyncio.gather(*(sweeper.take_stale() for sweeper in (b, c, b, c)))
    flat = [(i, j) for i, jobs in enumerate(taken) for j in jobs]
    assert len(flat) == 1, taken
    winner = (b, c, b, c)[flat[0][0]]
    recovered = flat[0][1]
    assert (recovered.id, recovered.question, recovered.lang, recovered.is_private) == (
        job.id, job.question, "en", True)
    assert recovered.attempts == 2, "its second owner"
    assert await winner.state_of(job.id) == (RUNNING, winner.owner, 2)
    assert not await dead.beat(job.id), "the old owner learns it lost the job"
    assert not await dead.finish(job.id)


async def test_a_heartbeating_owner_keeps_its_job(engine: AsyncEngine) -> None:
    owner, sweeper = replica(engine, "owner"), replica(engine, "sweeper")
    job = question(chat_id=-100, private=False)
    assert await owner.open(job)
    async with owner.owned(job.id, lambda: 777) as held:
        await asyncio.sleep(0.9)  # more than twice the stale time, heartbeats every 0.1 s
        assert await sweeper.take_stale() == []
        assert not await sweeper.open(job)
        assert await held.beat()
    await asyncio.sleep(0.5)  # the block ended without done: the owner is gone
    [recovered] = await sweeper.take_stale()
    assert recovered.placeholder_message_id == 777, "the heartbeat recorded the placeholder"


async def test_a_redelivered_question_takes_over_a_dead_owner(engine: AsyncEngine) -> None:
    dead, live = replica(engine, "dead"), replica(engine, "live")
    job = question()
    first = await dead.open(job)
    assert first is not None and first.attempts == 1, "a new question: answered in full by its replica"
    async with dead.owned(job.id, lambda: 777):
        await asyncio.sleep(0.2)  # the dead replica's heartbeat recorded its half-written placeholder
    await asyncio.sleep(0.5)
    taken = await live.open(job)
    assert taken is not None, "the redelivered update takes the question over"
    assert (taken.attempts, taken.placeholder_message_id) == (2, 777), "a recovery, into that placeholder"
    assert await live.take_stale() == [], "and no sweeper answers it as well"


async def test_a_released_job_is_neither_recovered_nor_blocking(engine: AsyncEngine) -> None:
    a, b = replica(engine, "a"), replica(engine, "b")
    job = question()
    assert await a.open(job)
    await a.release(job.id)  # the live handler failed and apologised
    await asyncio.sleep(0.5)
    assert await b.take_stale() == []
    assert await b.open(job), "the webhook's redelivery may answer it"


async def _placeholder(bot: Bot, chat_id: int) -> int:
    return (await bot.send_message(chat_id, "✍️ Writing the answer… HBM is", parse_mode=None)).message_id


async def test_the_sweeper_answers_once_into_the_placeholder(engine: AsyncEngine, api_bot: Bot,
                                                             stub: TelegramStub) -> None:
    dead = replica(engine, "dead")
    chat_id = -1005
    job = question(chat_id=chat_id, private=False)
    assert await dead.open(job)
    placeholder = await _placeholder(api_bot, chat_id)
    assert await dead.beat(job.id, placeholder)
    await asyncio.sleep(0.5)
    sweepers = [AnswerJobSweeper(api_bot, replica(engine, name), answerer=None) for name in ("b", "c")]
    answered = await asyncio.gather(*(s.run_once() for s in sweepers))
    assert sorted(answered) == [0, 1]
    edits = stub.calls_to("editMessageText", chat_id)
    assert len(edits) == 1 and edits[0].params["message_id"] == placeholder
    assert "not available right now" in parse_html(edits[0].params["text"])
    assert len(stub.calls_to("sendMessage", chat_id)) == 1, "only the dead replica's placeholder was sent"
    assert (await dead.state_of(job.id) or ("",))[0] == DONE
    assert [await s.run_once() for s in sweepers] == [0, 0]


async def test_a_question_that_keeps_killing_replicas_gets_an_apology(engine: AsyncEngine, api_bot: Bot,
                                                                      stub: TelegramStub) -> None:
    once = AnswerJobSettings(heartbeat_s=0.1, stale_s=0.4, max_attempts=1)
    dead = replica(engine, "dead", once)
    job = question(chat_id=4242)
    assert await dead.open(job)
    await asyncio.sleep(0.5)
    sweeper = AnswerJobSweeper(api_bot, replica(engine, "b", once), answerer=None)
    assert await sweeper.run_once() == 1
    [sent] = stub.sent_texts(4242)
    assert "could not answer this question" in parse_html(sent)
    assert (await dead.state_of(job.id) or ("",))[0] == FAILED
