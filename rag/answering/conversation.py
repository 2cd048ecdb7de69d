"""Conversation history per (chat, thread), bounded by tokens and persisted so it survives a restart.

Two stores with one interface: a SQLAlchemy table (SQLite by default, PostgreSQL by URL) and Redis
(when ``DB_REDIS_URL`` is set). Each keeps the newest turns of a conversation whose token counts add up
to at most ``max_tokens``; older turns are deleted on write, so storage stays bounded as well.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import BigInteger, DateTime, Integer, String, Text, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from infra.db import Base, session_factory
from infra.migrate import migrate
from infra.redis_conn import REDIS_DOWN_ERRORS, Outage, fail_fast_redis
from infra.settings import Settings
from models.base import estimate_tokens
from rag.answering.prompt import Turn

TokenCounter = Callable[[str], int]
log = logging.getLogger(__name__)


def conversation_key(chat_id: int | str, thread_id: int | str | None = None) -> str:
    """One conversation per chat, or per topic: a forum supergroup's, or a private chat's (Bot API 9.3
    topics: each topic of a DM with a topic-mode bot is its own conversation)."""
    return f"{chat_id}:{thread_id}" if thread_id not in (None, 0, "") else str(chat_id)


class ConversationTurnRow(Base):
    __tablename__ = "conversation_turns"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    key: Mapped[str] = mapped_column(String(128), index=True)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=lambda: datetime.now(UTC))


class ConversationStore(Protocol):
    max_tokens: int

    async def history(self, key: str) -> list[Turn]: ...

    async def append(self, key: str, question: str, answer: str) -> None: ...

    async def clear(self, key: str) -> None: ...

    async def aclose(self) -> None: ...


def _newest_within(token_counts: list[int], budget: int) -> int:
    """How many of the newest items (counts given oldest first) fit in the budget."""
    total = kept = 0
    for tokens in reversed(token_counts):
        if total + tokens > budget:
            break
        total += tokens
        kept += 1
    return kept


class SQLConversationStore:
    def __init__(self, engine: AsyncEngine, max_tokens: int, count_tokens: TokenCounter = estimate_tokens,
                 ) -> None:
        self.engine = engine
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens
        self._sessions = session_factory(engine)

    async def history(self, key: str) -> list[Turn]:
        async with self._sessions() as session:
            rows = (await session.execute(
                select(ConversationTurnRow.role, ConversationTurnRow.content, ConversationTurnRow.tokens)
                .where(ConversationTurnRow.key == key).order_by(ConversationTurnRow.id)
            )).all()
        kept = _newest_within([row.tokens for row in rows], self.max_tokens)
        return [Turn(row.role, row.content) for row in rows[len(rows) - kept:]]

    async def append(self, key: str, question: str, answer: str) -> None:
        async with self._sessions() as session, session.begin():
            for role, text in (("user", question), ("assistant", answer)):
                session.add(ConversationTurnRow(key=key, role=role, content=text,
                                                tokens=self.count_tokens(text)))
            await session.flush()
            rows = (await session.execute(
                select(ConversationTurnRow.id, ConversationTurnRow.tokens)
                .where(ConversationTurnRow.key == key).order_by(ConversationTurnRow.id)
            )).all()
            kept = _newest_within([row.tokens for row in rows], self.max_tokens)
            if kept < len(rows):
                first_kept_id = rows[len(rows) - kept].id if kept else rows[-1].id + 1
                await session.execute(delete(ConversationTurnRow).where(
                    ConversationTurnRow.key == key, ConversationTurnRow.id < first_kept_id))

    async def clear(self, key: str) -> None:
        async with self._sessions() as session, session.begin():
            await session.execute(delete(ConversationTurnRow).where(ConversationTurnRow.key == key))

    async def aclose(self) -> None:
        return None  # the engine belongs to the services container


class RedisConversationStore:
    """History in Redis, shared by replicas. While Redis is down questions are answered without their
    follow-up context (an empty history, logged once per outage) and turns are not kept, rather than
    failing or waiting: history is a convenience, the answer is not."""

    PREFIX = "anchorgpu:conversation:"

    def __init__(self, redis_url: str, max_tokens: int, count_tokens: TokenCounter = estimate_tokens,
                 ttl_s: int = 7 * 24 * 3600) -> None:
        self.redis: Any = fail_fast_redis(redis_url, decode_responses=True)
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens
        self.ttl_s = ttl_s
        self.outage = Outage("conversation history", "questions are answered without follow-up context", log)

    def _key(self, key: str) -> str:
        return self.PREFIX + key

    async def _load(self, key: str) -> list[dict[str, Any]]:
        return [json.loads(item) for item in await self.redis.lrange(self._key(key), 0, -1)]

    async def history(self, key: str) -> list[Turn]:
        if self.outage.skip():
            return []
        try:
            items = await self._load(key)
        except REDIS_DOWN_ERRORS as exc:
            self.outage.failed(exc)
            return []
        self.outage.succeeded()
        kept = _newest_within([item["tokens"] for item in items], self.max_tokens)
        return [Turn(item["role"], item["text"]) for item in items[len(items) - kept:]]

    async def append(self, key: str, question: str, answer: str) -> None:
        if self.outage.skip():
            return
        try:
            await self._append(key, question, answer)
        except REDIS_DOWN_ERRORS as exc:
            self.outage.failed(exc)
            return
        self.outage.succeeded()

    async def _append(self, key: str, question: str, answer: str) -> None:
        redis_key = self._key(key)
        items = [json.dumps({"role": role, "text": text, "tokens": self.count_tokens(text)},
                            ensure_ascii=False)
                 for role, text in (("user", question), ("assistant", answer))]
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(redis_key, *items)
            pipe.expire(redis_key, self.ttl_s)
            await pipe.execute()
        stored = await self._load(key)
        kept = _newest_within([item["tokens"] for item in stored], self.max_tokens)
        if kept < len(stored):
            await self.redis.ltrim(redis_key, len(stored) - kept, -1)

    async def clear(self, key: str) -> None:
        await self.redis.delete(self._key(key))

    async def aclose(self) -> None:
        await self.redis.aclose()


async def build_conversation_store(settings: Settings, engine: AsyncEngine | None,
                                   count_tokens: TokenCounter = estimate_tokens) -> ConversationStore | None:
    """Redis when ``DB_REDIS_URL`` is set, else the SQL table (the database migrated first); None without either."""
    budget = settings.llm.history_tokens
    if settings.db.redis_url:
        return RedisConversationStore(settings.db.redis_url, budget, count_tokens)
    if engine is None:
        return None
    await migrate(engine)
    return SQLConversationStore(engine, budget, count_tokens)
