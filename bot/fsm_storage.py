"""aiogram FSM storage in the app database (SQLite or PostgreSQL), so conversations survive restarts.

The /quote guided flow keeps its step and choices here. One row per storage key; writes are upserts
(``INSERT … ON CONFLICT DO UPDATE`` on both backends), so concurrent updates never fail on a duplicate.
With ``DB_REDIS_URL`` set the app uses aiogram's ``RedisStorage`` instead (see :func:`build_fsm_storage`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, KeyBuilder, StateType, StorageKey
from sqlalchemy import DateTime, String, Table, Text, bindparam, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from infra.batching import MicroBatcher
from infra.db import Base, conflict_insert, run_in_transaction
from infra.migrate import migrate
from infra.redis_conn import REDIS_DOWN_ERRORS, Outage, fail_fast_redis
from infra.settings import Settings

log = logging.getLogger(__name__)


class FSMRow(Base):
    __tablename__ = "bot_fsm"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    state: Mapped[str | None] = mapped_column(String(255), nullable=True)
    data: Mapped[str] = mapped_column(Text, default="{}")
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


FSM = cast(Table, FSMRow.__table__)


class SqlAlchemyStorage(BaseStorage):
    def __init__(self, engine: AsyncEngine, key_builder: KeyBuilder | None = None) -> None:
        self.engine = engine
        self.key_builder = key_builder or DefaultKeyBuilder(with_bot_id=True, with_destiny=True)
        self._schema_ready = False
        self._select_states = select(FSM.c.key, FSM.c.state).where(FSM.c.key.in_(bindparam("keys", expanding=True)))
        self._state_reads: MicroBatcher[str, str | None] = MicroBatcher(self._read_states)

    async def _ensure_schema(self) -> None:
        if not self._schema_ready:
            await migrate(self.engine)  # the bot migrated at start-up; this storage may be used alone
            self._schema_ready = True

    async def _upsert(self, key: StorageKey, values: dict[str, Any]) -> None:
        await self._ensure_schema()
        row = {"key": self.key_builder.build(key), "state": None, "data": "{}",
               "updated_at": dt.datetime.now(dt.UTC), **values}
        statement = conflict_insert(self.engine, FSM).values(**row).on_conflict_do_update(
            index_elements=[FSM.c.key], set_={**values, "updated_at": row["updated_at"]})
        async with self.engine.begin() as conn:
            await conn.execute(statement)

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        value = state.state if isinstance(state, State) else state
        await self._upsert(key, {"state": value})

    async def get_state(self, key: StorageKey) -> str | None:
        # aiogram reads the state for EVERY update, before any middleware of ours: if this raised while the
        # database is down, each update would be dropped unanswered. Without it, commands still answer.
        # The reads of one loop turn share one SELECT (group read).
        try:
            return await self._state_reads.submit(self.key_builder.build(key))
        except (SQLAlchemyError, OSError):
            log.warning("FSM state unavailable (database down); handling the update without it", exc_info=True)
            return None

    async def _read_states(self, keys: list[str]) -> list[str | None]:
        await self._ensure_schema()
        params = {"keys": list(dict.fromkeys(keys))}
        rows = await run_in_transaction(self.engine, lambda conn: conn.execute(self._select_states, params).all())
        states = {row.key: cast(str | None, row.state) for row in rows}
        return [states.get(key) for key in keys]

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        await self._upsert(key, {"data": json.dumps(dict(data), ensure_ascii=False)})

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        row = await self._row(key)
        return {} if row is None else cast(dict[str, Any], json.loads(row.data or "{}"))

    async def _row(self, key: StorageKey) -> Any:
        await self._ensure_schema()
        async with self.engine.connect() as conn:
            return (await conn.execute(select(FSM.c.state, FSM.c.data)
                                       .where(FSM.c.key == self.key_builder.build(key)))).first()

    async def close(self) -> None:
        # the engine belongs to the app runtime, which disposes of it
        return None


# The step aiogram sees while the FSM storage cannot be read: no step's state filter matches it, so a flow's
# buttons and typed answers reach the handlers that say the step is unavailable (bot/routers/quote.py),
# while commands and questions, which need no step, are handled as usual.
FSM_UNAVAILABLE = "anchorgpu:fsm-unavailable"


class FSMUnavailableError(Exception):
    """The FSM storage (Redis) cannot be written or read now; the error boundary tells the user so."""


class FailSoftStorage(BaseStorage):
    """aiogram's Redis storage that degrades instead of failing every update while Redis is gone.

    aiogram reads the state of every update before any middleware of ours; a read that raised would drop
    the update unanswered (polling has already confirmed it). Reads therefore return
    :data:`FSM_UNAVAILABLE` during an outage; writes and data reads raise :class:`FSMUnavailableError`,
    which the error boundary turns into "this step is unavailable right now". No state is kept anywhere
    else in the meantime: a second store would disagree with Redis once it is back.
    """

    def __init__(self, inner: BaseStorage, client: Any, retry_s: float = 1.0) -> None:
        self.inner = inner
        self.client = client
        self.outage = Outage("FSM (guided /quote flow)", "its steps answer that they are unavailable", log,
                             retry_s)

    async def get_state(self, key: StorageKey) -> str | None:
        if self.outage.skip():
            return FSM_UNAVAILABLE
        try:
            state = await self.inner.get_state(key)
        except REDIS_DOWN_ERRORS as exc:
            self.outage.failed(exc)
            return FSM_UNAVAILABLE
        self.outage.succeeded()
        return state

    async def _write(self, call: Callable[[], Awaitable[Any]]) -> Any:
        if self.outage.skip():
            raise FSMUnavailableError("Redis is down")
        try:
            result = await call()
        except REDIS_DOWN_ERRORS as exc:
            self.outage.failed(exc)
            raise FSMUnavailableError(str(exc)) from exc
        self.outage.succeeded()
        return result

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        await self._write(lambda: self.inner.set_state(key, state))

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        await self._write(lambda: self.inner.set_data(key, data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        return cast(dict[str, Any], await self._write(lambda: self.inner.get_data(key)))

    async def close(self) -> None:
        await self.inner.close()


def build_fsm_storage(settings: Settings, engine: AsyncEngine) -> BaseStorage:
    """Redis when ``DB_REDIS_URL`` is set (shared by replicas), otherwise the app database."""
    if settings.db.redis_url:
        from aiogram.fsm.storage.redis import RedisStorage

        client = fail_fast_redis(settings.db.redis_url)
        inner = RedisStorage(client, key_builder=DefaultKeyBuilder(with_bot_id=True, with_destiny=True))
        return FailSoftStorage(inner, client)
    return SqlAlchemyStorage(engine)
