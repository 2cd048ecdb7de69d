"""Conversation history: per (chat, thread), bounded by tokens, surviving a restart (SQLite, Redis)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from infra.db import create_engine
from infra.migrate import migrate
from infra.settings import DBSettings, LLMSettings, Settings
from rag.answering.conversation import (
    ConversationStore,
    RedisConversationStore,
    SQLConversationStore,
    build_conversation_store,
    conversation_key,
)
from rag.answering.prompt import Turn


def words(n: int) -> str:
    return " ".join(["слово"] * n)


def count_words(text: str) -> int:
    return len(text.split())


async def exercise_bound_and_isolation(store: ConversationStore, prefix: str) -> None:
    chat, thread, other = f"{prefix}:1", f"{prefix}:1:7", f"{prefix}:2"
    await store.append(chat, "что такое H100?", "GPU NVIDIA [1].")
    await store.append(thread, "что такое NVLink?", "Шина между GPU [1].")
    assert await store.history(chat) == [Turn("user", "что такое H100?"), Turn("assistant", "GPU NVIDIA [1].")]
    assert [t.text for t in await store.history(thread)] == ["что такое NVLink?", "Шина между GPU [1]."]
    assert await store.history(other) == []
    # budget 10 words: only the newest turns that fit stay
    await store.append(chat, words(3), words(4))
    await store.append(chat, words(2), words(3))
    history = await store.history(chat)
    assert [count_words(t.text) for t in history] == [4, 2, 3]
    await store.clear(chat)
    assert await store.history(chat) == []
    assert len(await store.history(thread)) == 2


async def test_conversation_key_per_chat_and_thread() -> None:
    assert conversation_key(-100123) == "-100123"
    assert conversation_key(-100123, 7) == "-100123:7"
    assert conversation_key(42, None) == conversation_key(42, 0) == "42"


async def test_sql_history_is_bounded_and_survives_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'state.db'}"
    engine = create_engine(url)
    store = SQLConversationStore(engine, max_tokens=10, count_tokens=count_words)
    await migrate(engine)
    await exercise_bound_and_isolation(store, "c")
    await store.append("c:5", "вопрос про H100", "ответ про H100 [1]")
    await engine.dispose()

    restarted = create_engine(url)  # a new process would do exactly this
    settings = Settings(llm=LLMSettings(history_tokens=10), db=DBSettings(url=url))
    again = await build_conversation_store(settings, restarted, count_words)
    assert isinstance(again, SQLConversationStore)
    assert [t.text for t in await again.history("c:5")] == ["вопрос про H100", "ответ про H100 [1]"]
    # old rows beyond the budget were deleted on write, not just hidden
    await again.append("c:5", words(5), words(5))
    async with restarted.connect() as conn:
        from sqlalchemy import text

        rows = (await conn.execute(text("select count(*) from conversation_turns where key='c:5'"))).scalar()
    assert rows == 2
    await restarted.dispose()


@pytest.mark.redis
async def test_redis_history_is_bounded_and_persistent() -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    store = RedisConversationStore("redis://127.0.0.1:6379/0", max_tokens=10, count_tokens=count_words)
    try:
        await exercise_bound_and_isolation(store, prefix)
        await store.append(f"{prefix}:9", "q", "a")
        fresh = RedisConversationStore("redis://127.0.0.1:6379/0", max_tokens=10, count_tokens=count_words)
        assert [t.text for t in await fresh.history(f"{prefix}:9")] == ["q", "a"]
        await fresh.clear(f"{prefix}:9")
        await fresh.clear(f"{prefix}:1:7")
        await fresh.aclose()
    finally:
        await store.aclose()
