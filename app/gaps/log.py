"""Feedback on answers and the gap log: what the glossary could not answer, kept for the operators.

Two records, both written by the fronts after an answer is sent (the domain never sees Telegram):

* an **answer record** per glossary answer (question, text, sources, model, retrieval status, the
  verification outcome) with the users' votes on it (👍 / 👎 / «неверно» with an optional reason): one vote
  per user per answer, changeable. Users are stored as a salted SHA-256 of their id, never the id;
* the **gap log**: every out-of-scope refusal (``unanswered``), fallback (``fallback``: statuses
  fallback / unavailable / timeout / busy), rejected generated sentence (``rejected``) and downvoted answer
  (``downvoted``), with the question, its language and the nearest glossary entries and their scores.

Both are kept ``FEEDBACK_RETENTION_DAYS`` days; :meth:`FeedbackStore.purge` (run at start) deletes older rows.
``anchorgpu report`` (:mod:`app.gaps.report`) reads them back.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import BigInteger, DateTime, ForeignKey, Index, Integer, String, Text, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from app.views.answer import answer_text
from infra.db import Base, conflict_insert
from infra.settings import Settings

if TYPE_CHECKING:
    from rag.answering.events import Answer
    from rag.retrieval.retriever import HybridRetriever

Vote = Literal["up", "down", "wrong"]
VOTES: tuple[Vote, ...] = ("up", "down", "wrong")
GapKind = Literal["unanswered", "fallback", "rejected", "downvoted"]
GAP_KINDS: tuple[GapKind, ...] = ("unanswered", "fallback", "rejected", "downvoted")
FALLBACK_STATUSES = frozenset({"fallback", "unavailable", "timeout", "busy"})
MAX_REASON_CHARS = 300
MAX_QUESTION_CHARS = 2000


class AnswerRecordRow(Base):
    __tablename__ = "answer_records"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    question: Mapped[str] = mapped_column(Text)
    lang: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(Text)
    sources_json: Mapped[str] = mapped_column(Text)  # [entry id, ...] in the order shown
    model: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    rejected_count: Mapped[int] = mapped_column(Integer)
    rejected_json: Mapped[str] = mapped_column(Text)  # [{"reason", "text"}, ...]
    nearest_json: Mapped[str] = mapped_column(Text)  # [{"id", "score"}, ...]: a downvote logs them


class AnswerVoteRow(Base):
    __tablename__ = "answer_votes"

    answer_id: Mapped[str] = mapped_column(String(32), ForeignKey("answer_records.id", ondelete="CASCADE"),
                                           primary_key=True)
    user_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    vote: Mapped[str] = mapped_column(String(8))
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class GapRow(Base):
    __tablename__ = "gap_log"
    __table_args__ = (Index("ix_gap_log_kind_created", "kind", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    question: Mapped[str] = mapped_column(Text)
    lang: Mapped[str] = mapped_column(String(8))
    answer_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    nearest_json: Mapped[str] = mapped_column(Text)  # [{"id", "score"}, ...], best first
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)  # the status, the rejection reason...


@dataclass(frozen=True)
class Nearest:
    """A glossary entry near the question and its retrieval score."""

    id: str
    score: float


@dataclass(frozen=True)
class Gap:
    id: int
    created_at: datetime
    kind: str
    question: str
    lang: str
    nearest: tuple[Nearest, ...]
    answer_id: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class RecordedAnswer:
    """What was sent, in the words the store keeps (built by the front from a ``rag.answering.events.Answer``)."""

    question: str
    lang: str
    text: str
    sources: tuple[str, ...]
    model: str
    status: str
    rejected: tuple[tuple[str, str], ...]  # (reason, sentence)
    nearest: tuple[Nearest, ...] = ()


@dataclass(frozen=True)
class VoteCounts:
    up: int = 0
    down: int = 0
    wrong: int = 0


def hash_user(user_id: int | str, salt: str) -> str:
    return hashlib.sha256(f"{salt}:{user_id}".encode()).hexdigest()


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value  # SQLite returns naive datetimes


def _nearest_json(nearest: Sequence[Nearest]) -> str:
    return json.dumps([{"id": n.id, "score": round(float(n.score), 4)} for n in nearest], ensure_ascii=False)


def _nearest_from(raw: str) -> tuple[Nearest, ...]:
    return tuple(Nearest(str(item["id"]), float(item["score"])) for item in json.loads(raw or "[]"))


class FeedbackStore:
    """Answer records, votes and the gap log on the app database (SQLite or PostgreSQL)."""

    def __init__(self, engine: AsyncEngine, salt: str, retention_days: int = 90) -> None:
        if not salt:
            raise ValueError("a feedback store needs a non-empty salt for user ids")
        self.engine = engine
        self.salt = salt
        self.retention_days = retention_days

    # ------------------------------------------------------------ writing

    async def record_answer(self, answer: RecordedAnswer, *, now: datetime | None = None) -> str:
        """Store a sent answer and its gaps (refusal, fallback, rejected sentences); returns its id."""
        now = now or datetime.now(UTC)
        answer_id = uuid.uuid4().hex
        question = answer.question[:MAX_QUESTION_CHARS]
        async with self.engine.begin() as conn:
            await conn.execute(AnswerRecordRow.__table__.insert().values(  # type: ignore[attr-defined]
                id=answer_id, created_at=now, question=question, lang=answer.lang, text=answer.text,
                sources_json=json.dumps(list(answer.sources)), model=answer.model[:128], status=answer.status,
                rejected_count=len(answer.rejected),
                rejected_json=json.dumps([{"reason": r, "text": s} for r, s in answer.rejected], ensure_ascii=False),
                nearest_json=_nearest_json(answer.nearest)))
            gaps: list[dict[str, Any]] = []
            if answer.status == "out_of_scope":
                gaps.append({"kind": "unanswered", "detail": answer.status})
            elif answer.status in FALLBACK_STATUSES:
                gaps.append({"kind": "fallback", "detail": answer.status})
            gaps += [{"kind": "rejected", "detail": reason} for reason, _ in answer.rejected]
            if gaps:
                await conn.execute(GapRow.__table__.insert(), [  # type: ignore[attr-defined]
                    {"created_at": now, "question": question, "lang": answer.lang, "answer_id": answer_id,
                     "nearest_json": _nearest_json(answer.nearest), **gap} for gap in gaps])
        return answer_id

    async def record_gap(self, kind: GapKind, question: str, lang: str, nearest: Sequence[Nearest] = (), *,
                         answer_id: str | None = None, detail: str | None = None,
                         now: datetime | None = None) -> None:
        if kind not in GAP_KINDS:
            raise ValueError(f"unknown gap kind {kind!r}")
        async with self.engine.begin() as conn:
            await conn.execute(GapRow.__table__.insert().values(  # type: ignore[attr-defined]
                created_at=now or datetime.now(UTC), kind=kind, question=question[:MAX_QUESTION_CHARS],
                lang=lang, answer_id=answer_id, nearest_json=_nearest_json(nearest), detail=detail))

    async def vote(self, answer_id: str, user_id: int | str, vote: Vote, *,
                   now: datetime | None = None) -> bool:
        """One vote per user per answer; a second vote replaces the first. False: no such answer.

        Turning a vote into 👎 or «неверно» logs the answer's question as a ``downvoted`` gap (once per
        change, so repeated presses of the same button do not inflate the log).
        """
        if vote not in VOTES:
            raise ValueError(f"unknown vote {vote!r}")
        now = now or datetime.now(UTC)
        user = hash_user(user_id, self.salt)
        votes = AnswerVoteRow.__table__
        async with self.engine.begin() as conn:
            record = (await conn.execute(
                select(AnswerRecordRow.question, AnswerRecordRow.lang, AnswerRecordRow.nearest_json)
                .where(AnswerRecordRow.id == answer_id))).first()
            if record is None:
                return False
            previous = (await conn.execute(select(AnswerVoteRow.vote).where(
                AnswerVoteRow.answer_id == answer_id, AnswerVoteRow.user_hash == user))).scalar()
            insert = conflict_insert(self.engine, votes).values(  # type: ignore[arg-type]
                answer_id=answer_id, user_hash=user, vote=vote, reason=None, updated_at=now)
            await conn.execute(insert.on_conflict_do_update(
                index_elements=["answer_id", "user_hash"],
                set_={"vote": vote, "reason": None, "updated_at": now}))
            if vote != "up" and previous not in ("down", "wrong"):
                await conn.execute(GapRow.__table__.insert().values(  # type: ignore[attr-defined]
                    created_at=now, kind="downvoted", question=record.question, lang=record.lang,
                    answer_id=answer_id, nearest_json=record.nearest_json, detail=vote))
        return True

    async def set_reason(self, answer_id: str, user_id: int | str, reason: str) -> bool:
        """The one-line reason of a «неверно» vote; False when this user has no such vote."""
        reason = " ".join(reason.split())[:MAX_REASON_CHARS]
        async with self.engine.begin() as conn:
            result = await conn.execute(update(AnswerVoteRow).where(
                AnswerVoteRow.answer_id == answer_id, AnswerVoteRow.user_hash == hash_user(user_id, self.salt),
                AnswerVoteRow.vote == "wrong").values(reason=reason))
            if result.rowcount:
                await conn.execute(update(GapRow).where(GapRow.answer_id == answer_id, GapRow.kind == "downvoted",
                                                        GapRow.detail == "wrong").values(detail=f"wrong: {reason}"))
        return bool(result.rowcount)

    async def purge(self, *, now: datetime | None = None) -> int:
        """Delete what is older than the retention period; returns the rows deleted."""
        cutoff = (now or datetime.now(UTC)) - timedelta(days=self.retention_days)
        async with self.engine.begin() as conn:
            gaps = await conn.execute(delete(GapRow).where(GapRow.created_at < cutoff))
            old = select(AnswerRecordRow.id).where(AnswerRecordRow.created_at < cutoff)
            # explicit: SQLite enforces ON DELETE CASCADE only with foreign keys on, not on every connection
            await conn.execute(delete(AnswerVoteRow).where(AnswerVoteRow.answer_id.in_(old)))
            answers = await conn.execute(delete(AnswerRecordRow).where(AnswerRecordRow.created_at < cutoff))
        return int(gaps.rowcount or 0) + int(answers.rowcount or 0)

    # ------------------------------------------------------------ reading

    async def gaps(self, *, since: datetime | None = None, kinds: Sequence[str] = GAP_KINDS,
                   limit: int | None = None) -> list[Gap]:
        query = select(GapRow).where(GapRow.kind.in_(list(kinds))).order_by(GapRow.id.desc())
        if since is not None:
            query = query.where(GapRow.created_at >= since)
        if limit is not None:
            query = query.limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [Gap(id=row.id, created_at=_utc(row.created_at), kind=row.kind, question=row.question,
                    lang=row.lang, nearest=_nearest_from(row.nearest_json), answer_id=row.answer_id,
                    detail=row.detail) for row in rows]

    async def vote_counts(self, *, since: datetime | None = None) -> VoteCounts:
        query = select(AnswerVoteRow.vote, func.count()).group_by(AnswerVoteRow.vote)
        if since is not None:
            query = query.where(AnswerVoteRow.updated_at >= since)
        async with self.engine.connect() as conn:
            counts = {vote: int(n) for vote, n in (await conn.execute(query)).all()}
        return VoteCounts(up=counts.get("up", 0), down=counts.get("down", 0), wrong=counts.get("wrong", 0))

    async def answers(self, *, since: datetime | None = None) -> list[tuple[datetime, str]]:
        """(sent at, status) of every recorded answer: the denominators of the quality figures."""
        query = select(AnswerRecordRow.created_at, AnswerRecordRow.status)
        if since is not None:
            query = query.where(AnswerRecordRow.created_at >= since)
        async with self.engine.connect() as conn:
            return [(_utc(at), status) for at, status in (await conn.execute(query)).all()]

    async def votes(self, *, since: datetime | None = None) -> list[tuple[datetime, str]]:
        query = select(AnswerVoteRow.updated_at, AnswerVoteRow.vote)
        if since is not None:
            query = query.where(AnswerVoteRow.updated_at >= since)
        async with self.engine.connect() as conn:
            return [(_utc(at), vote) for at, vote in (await conn.execute(query)).all()]

    async def counts_since(self, since: datetime) -> dict[str, int]:
        """Answers sent, votes (👎 counts «неверно» too) and gaps by kind since ``since``: /admin's "today"."""
        votes = await self.vote_counts(since=since)
        counts = {"answers": len(await self.answers(since=since)), "up": votes.up, "down": votes.down + votes.wrong}
        for gap in await self.gaps(since=since):
            counts[gap.kind] = counts.get(gap.kind, 0) + 1
        return counts

    async def frequent_gaps(self, since: datetime, limit: int = 5) -> list[tuple[int, str, str]]:
        """(count, kind, question) of the most frequent gap questions (same words, case aside)."""
        seen: dict[tuple[str, str], list[Any]] = {}
        for gap in await self.gaps(since=since, kinds=("unanswered", "downvoted", "fallback")):
            key = (gap.kind, " ".join(gap.question.lower().split()))
            seen.setdefault(key, [0, gap.kind, gap.question])[0] += 1
        ranked = sorted(seen.values(), key=lambda item: -item[0])[:limit]
        return [(int(count), str(kind), str(question)) for count, kind, question in ranked]

    async def vote_of(self, answer_id: str, user_id: int | str) -> tuple[str, str | None] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(AnswerVoteRow.vote, AnswerVoteRow.reason).where(
                AnswerVoteRow.answer_id == answer_id,
                AnswerVoteRow.user_hash == hash_user(user_id, self.salt)))).first()
        return None if row is None else (row.vote, row.reason)


def feedback_salt(settings: Settings) -> str:
    """FEEDBACK_USER_SALT, else a random salt made once and kept in the state directory."""
    if settings.feedback.user_salt is not None and settings.feedback.user_salt.get_secret_value():
        return settings.feedback.user_salt.get_secret_value()
    path = settings.data.state_dir / "feedback.salt"
    try:
        kept = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        kept = ""
    if not kept:
        kept = secrets.token_hex(16)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(kept + "\n", encoding="utf-8")
        path.chmod(0o600)
    return kept


def build_feedback_store(settings: Settings, engine: AsyncEngine) -> FeedbackStore:
    return FeedbackStore(engine, feedback_salt(settings), settings.feedback.retention_days)


NEAREST_K = 3


async def nearest_entries(retriever: HybridRetriever, question: str, k: int = NEAREST_K) -> tuple[Nearest, ...]:
    """The glossary entries nearest to the question and their fused retrieval scores (best first)."""
    result = await asyncio.to_thread(retriever.search, question, k)
    return tuple(Nearest(hit.entry.id, float(hit.score)) for hit in result.hits[:k])


def recorded_answer(question: str, answer: Answer, nearest: Sequence[Nearest] = ()) -> RecordedAnswer:
    return RecordedAnswer(
        question=question, lang=answer.lang, text=answer_text(answer), sources=tuple(e.id for e in answer.sources),
        model=answer.model, status=answer.status,
        rejected=tuple((check.rejected or "unsupported", check.text) for check in answer.rejected),
        nearest=tuple(nearest))
