"""Answer jobs: a glossary question accepted by one replica is answered even if that replica dies.

A long answer outlives the update that asked it (aiogram confirms a polled update at once; a webhook's 55 s
window can pass while the model writes), so a replica killed mid-answer used to lose the question. Now
the handler records the question as a row of ``answer_jobs`` before answering (chat, topic, user, question,
languages, the message to reply to, the owner replica, a heartbeat) and heartbeats it every
``ANSWER_JOB_HEARTBEAT_S`` while it generates; after the final message is sent the row is ``done``.

A sweeper (:class:`bot.delivery.answer_recovery.AnswerJobSweeper`, one replica at a time under the
``answer-job-sweeper`` lease, and at start) takes over rows whose heartbeat is older than
``ANSWER_JOB_STALE_S`` with ``UPDATE … SET owner = me WHERE id = … AND state = 'running' AND heartbeat_at <
cutoff``: of two sweepers (or a sweeper and a
redelivered update) exactly one UPDATE matches. The taker answers without the model
(:meth:`rag.answering.answerer.Answerer.recover`: the glossary's own sentences, marked as recovered), in the place the
dead replica's placeholder was (it is recorded with each heartbeat), and marks the row done.

Exactly one answer per job: an owner whose row was taken over (it stalled past the stale time) sees that
at its next heartbeat or just before its final send, and does not send. A replica killed after sending but
before marking done is the one window left: its question is answered twice (at least once, never lost).
A job whose ``ANSWER_JOB_MAX_ATTEMPTS`` owners (the first included) all died (a question that kills
whoever answers it) gets a short apology from the next one instead of another try.

The row's id is the question's message (``<chat>:<message>``), so a redelivered update finds the job
already running (skipped), done (skipped) or stale (taken over and answered in full).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import cast

from sqlalchemy import BigInteger, Boolean, ColumnElement, Index, Integer, String, Table, Text, delete, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from bot.output.streaming import Target
from infra.db import Base, conflict_insert
from infra.i18n import Lang
from infra.leases import db_now_ms, replica_id, uncancelled
from infra.settings import AnswerJobSettings

log = logging.getLogger(__name__)

RUNNING = "running"
DONE = "done"
FAILED = "failed"  # given up after max_attempts takeovers (an apology was sent)
KEEP_FINISHED_S = 24 * 3600  # done and failed rows are kept a day, for looking into what happened


class AnswerJobRow(Base):
    __tablename__ = "answer_jobs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # "<chat>:<message>": one question
    chat_id: Mapped[int] = mapped_column(BigInteger)
    thread_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    user_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    is_private: Mapped[bool] = mapped_column(Boolean)
    reply_to_message_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    question: Mapped[str] = mapped_column(Text)
    lang: Mapped[str] = mapped_column(String(8))  # the bot's own words (notices)
    answer_lang: Mapped[str | None] = mapped_column(String(8), nullable=True)  # None: the question's language
    # the group placeholder the owner was editing: a recovered answer replaces it instead of leaving it
    placeholder_message_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    owner: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)  # owners so far, the first included
    created_at: Mapped[int] = mapped_column(BigInteger)  # epoch ms, the database's clock
    heartbeat_at: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_answer_jobs_state_heartbeat", "state", "heartbeat_at"),)


JOBS = cast(Table, AnswerJobRow.__table__)


@dataclass(frozen=True)
class AnswerJob:
    chat_id: int
    message_id: int
    thread_id: int | None
    user_id: int | None
    is_private: bool
    reply_to_message_id: int | None
    question: str
    lang: Lang
    answer_lang: Lang | None = None
    placeholder_message_id: int | None = None
    attempts: int = 0

    @property
    def id(self) -> str:
        return f"{self.chat_id}:{self.message_id}"

    @property
    def target(self) -> Target:
        return Target(chat_id=self.chat_id, thread_id=self.thread_id, reply_to_message_id=self.reply_to_message_id,
                      is_private=self.is_private)


def _lang(value: str | None) -> Lang | None:
    return cast(Lang, value) if value in ("ru", "en") else None


def _job(row: object) -> AnswerJob:
    r = cast(AnswerJobRow, row)
    chat_id, _, message_id = r.id.partition(":")
    return AnswerJob(chat_id=int(chat_id), message_id=int(message_id), thread_id=r.thread_id, user_id=r.user_id,
                     is_private=bool(r.is_private), reply_to_message_id=r.reply_to_message_id, question=r.question,
                     lang=_lang(r.lang) or "ru", answer_lang=_lang(r.answer_lang),
                     placeholder_message_id=r.placeholder_message_id, attempts=int(r.attempts))


class Ownership:
    """This replica's hold on one job while it answers: heartbeats, the check before sending, done."""

    def __init__(self, jobs: AnswerJobs, job_id: str, placeholder: Callable[[], int | None]) -> None:
        self.jobs = jobs
        self.job_id = job_id
        self.placeholder = placeholder
        self.lost = False  # another replica took the job over: it answers, we must not

    async def beat(self) -> bool:
        """Heartbeat (with the placeholder's id); False once the job is someone else's."""
        if self.lost:
            return False
        try:
            self.lost = not await uncancelled(self.jobs.beat(self.job_id, self.placeholder()))
        except (SQLAlchemyError, OSError) as exc:
            # the database is down: nobody can take the job over either, so keep answering
            log.warning("answer job %s: heartbeat failed: %s", self.job_id, exc)
        if self.lost:
            log.warning("answer job %s was taken over by another replica; not sending this answer", self.job_id)
        return not self.lost

    async def done(self, state: str = DONE) -> None:
        try:
            await self.jobs.finish(self.job_id, state)
        except (SQLAlchemyError, OSError) as exc:
            # the row stays running and is recovered once stale: a second answer beats none
            log.warning("answer job %s could not be marked done: %s", self.job_id, exc)

    async def _keep_beating(self) -> None:
        while True:
            if not await self.beat():
                return
            await asyncio.sleep(self.jobs.settings.heartbeat_s)


class AnswerJobs:
    """The ``answer_jobs`` table, seen by one replica."""

    def __init__(self, engine: AsyncEngine, settings: AnswerJobSettings | None = None,
                 owner: str | None = None) -> None:
        self.engine = engine
        self.settings = settings or AnswerJobSettings()
        self.owner = (owner or replica_id())[:64]

    def _stale(self) -> ColumnElement[bool]:
        return JOBS.c.heartbeat_at < db_now_ms(self.engine) - int(self.settings.stale_s * 1000)

    def _take(self, job_id: str) -> ColumnElement[bool]:
        return (JOBS.c.id == job_id) & (JOBS.c.state == RUNNING) & self._stale()

    async def _claim(self, conn: AsyncConnection, job_id: str) -> bool:
        taken = await conn.execute(
            update(JOBS).where(self._take(job_id))
            .values(owner=self.owner, heartbeat_at=db_now_ms(self.engine), attempts=JOBS.c.attempts + 1))
        return taken.rowcount == 1

    async def open(self, job: AnswerJob) -> AnswerJob | None:
        """Record a question before answering it; the job as stored when this replica is to answer it.

        None: the same question (a redelivered update) is being answered by a live replica, or was answered.
        A stale one (its replica died) is taken over: the job returned then has ``attempts`` > 1 and the
        dead replica's placeholder, and the caller recovers it as the sweeper would (into that placeholder).
        """
        now = db_now_ms(self.engine)
        # heartbeat 0: a new row is stale at once, so the one takeover UPDATE decides every case
        insert = conflict_insert(self.engine, JOBS).values(
            id=job.id, chat_id=job.chat_id, thread_id=job.thread_id, user_id=job.user_id,
            is_private=job.is_private, reply_to_message_id=job.reply_to_message_id, question=job.question,
            lang=job.lang, answer_lang=job.answer_lang, placeholder_message_id=None, owner=self.owner,
            state=RUNNING, attempts=0, created_at=now, heartbeat_at=0).on_conflict_do_nothing(
            index_elements=[JOBS.c.id])
        async with self.engine.begin() as conn:
            await conn.execute(insert)
            if not await self._claim(conn, job.id):
                return None
            return _job((await conn.execute(select(JOBS).where(JOBS.c.id == job.id))).one())

    async def take_stale(self, limit: int = 20) -> list[AnswerJob]:
        """Take over jobs whose owner stopped heartbeating; each is this replica's alone to answer."""
        candidates = select(JOBS.c.id).where(JOBS.c.state == RUNNING, self._stale()) \
            .order_by(JOBS.c.heartbeat_at).limit(limit)
        async with self.engine.connect() as conn:
            ids = list((await conn.execute(candidates)).scalars())
        taken: list[AnswerJob] = []
        for job_id in ids:
            async with self.engine.begin() as conn:
                if not await self._claim(conn, job_id):
                    continue  # another sweeper (or a redelivered update) was first
                row = (await conn.execute(select(JOBS).where(JOBS.c.id == job_id))).one()
            taken.append(_job(row))
        return taken

    async def beat(self, job_id: str, placeholder_message_id: int | None = None) -> bool:
        """Refresh our heartbeat; False when the job is no longer ours (taken over, or gone)."""
        values: dict[str, object] = {"heartbeat_at": db_now_ms(self.engine)}
        if placeholder_message_id is not None:
            values["placeholder_message_id"] = placeholder_message_id
        async with self.engine.begin() as conn:
            beaten = await conn.execute(update(JOBS).where(self._ours(job_id)).values(**values))
        return beaten.rowcount == 1

    def _ours(self, job_id: str) -> ColumnElement[bool]:
        return (JOBS.c.id == job_id) & (JOBS.c.owner == self.owner) & (JOBS.c.state == RUNNING)

    async def finish(self, job_id: str, state: str = DONE) -> bool:
        """The answer was sent: nobody recovers this job any more."""
        async with self.engine.begin() as conn:
            finished = await conn.execute(update(JOBS).where(self._ours(job_id))
                                          .values(state=state, heartbeat_at=db_now_ms(self.engine)))
        return finished.rowcount == 1

    async def release(self, job_id: str) -> None:
        """Forget a job this live replica could not answer (its handler failed and said so): a redelivered
        update may then open it again, and no sweeper answers it a second time."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(JOBS).where(self._ours(job_id)))

    async def purge(self) -> int:
        """Drop finished rows older than a day."""
        cutoff = db_now_ms(self.engine) - KEEP_FINISHED_S * 1000
        async with self.engine.begin() as conn:
            purged = await conn.execute(delete(JOBS).where(JOBS.c.state != RUNNING, JOBS.c.heartbeat_at < cutoff))
        return int(purged.rowcount or 0)

    async def state_of(self, job_id: str) -> tuple[str, str, int] | None:
        """(state, owner, attempts) of one job; for /admin-style checks and tests."""
        query = select(JOBS.c.state, JOBS.c.owner, JOBS.c.attempts).where(JOBS.c.id == job_id)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).one_or_none()
        return None if row is None else (row[0], row[1], int(row[2]))

    @contextlib.asynccontextmanager
    async def owned(self, job_id: str, placeholder: Callable[[], int | None] = lambda: None,
                    ) -> AsyncIterator[Ownership]:
        """Heartbeat ``job_id`` in the background while the block answers it."""
        ownership = Ownership(self, job_id, placeholder)
        task = asyncio.create_task(ownership._keep_beating(), name=f"answer-job-{job_id}")
        try:
            yield ownership
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
