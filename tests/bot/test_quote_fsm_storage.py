"""The /quote flow's FSM storage: the database one (SQLite, PostgreSQL) and Redis when configured.

A new storage object on the same database stands for a restarted bot: the step and the data must be back.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from aiogram.fsm.storage.base import StorageKey
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.fsm_storage import FailSoftStorage, SqlAlchemyStorage, build_fsm_storage
from bot.routers.quote import QuoteFlow
from infra.db import create_engine
from infra.settings import DBSettings, Settings

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def engine(sql_engine: AsyncEngine) -> AsyncEngine:
    return sql_engine


def key(chat: int = 5, user: int = 7) -> StorageKey:
    return StorageKey(bot_id=42, chat_id=chat, user_id=user)


async def test_state_and_data_survive_a_new_storage(engine: AsyncEngine) -> None:
    first = SqlAlchemyStorage(engine)
    assert await first.get_state(key()) is None and await first.get_data(key()) == {}
    await first.set_state(key(), QuoteFlow.count)
    await first.set_data(key(), {"msg_id": 1003, "gpu": "h100-sxm"})
    await first.update_data(key(), {"count": 8})
    await first.set_state(key(chat=6), QuoteFlow.gpu)  # another chat is another conversation

    restarted = SqlAlchemyStorage(engine)
    assert await restarted.get_state(key()) == QuoteFlow.count.state
    assert await restarted.get_data(key()) == {"msg_id": 1003, "gpu": "h100-sxm", "count": 8}
    assert await restarted.get_state(key(chat=6)) == QuoteFlow.gpu.state
    await restarted.set_state(key(), None)
    await restarted.set_data(key(), {})
    assert await restarted.get_state(key()) is None and await restarted.get_data(key()) == {}


def test_the_database_is_the_default_storage(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    settings = Settings(db=DBSettings(url=f"sqlite:///{tmp_path / 'x.db'}", redis_url=None))
    assert isinstance(build_fsm_storage(settings, engine), SqlAlchemyStorage)


@pytest.mark.redis
async def test_redis_storage_when_a_redis_url_is_set(tmp_path: Path) -> None:
    from aiogram.fsm.storage.redis import RedisStorage

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    settings = Settings(db=DBSettings(url=f"sqlite:///{tmp_path / 'x.db'}", redis_url=REDIS_URL))
    storage = build_fsm_storage(settings, engine)
    assert isinstance(storage, FailSoftStorage) and isinstance(storage.inner, RedisStorage)
    unique = key(chat=int(uuid.uuid4().int % 10**9), user=1)
    try:
        await storage.set_state(unique, QuoteFlow.duration)
        await storage.set_data(unique, {"gpu": "h200", "count": 4})
        again = build_fsm_storage(settings, engine)
        assert await again.get_state(unique) == QuoteFlow.duration.state
        assert await again.get_data(unique) == {"gpu": "h200", "count": 4}
        await again.close()
    finally:
        await storage.set_state(unique, None)
        await storage.set_data(unique, {})
        await storage.close()
