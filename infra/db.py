"""One async SQLAlchemy engine for the whole app: SQLite file by default, PostgreSQL by URL.

Tables are declared on :class:`Base` in their own domain modules and created by the migrations
(:mod:`infra.migrate`; revisions in ``infra/migrations/versions``), never by ``create_all``.

The hot path (update claims, FSM state reads, quote inserts: one tiny transaction per event-loop turn,
see :mod:`infra.batching`) goes through :func:`run_in_transaction`. On PostgreSQL that is asyncpg,
which needs no threads. On a SQLite file, aiosqlite hands every cursor call to its own thread and back
(about eight hand-offs per transaction, each a GIL round trip that stalls the event loop's socket I/O);
measured under ``anchorgpu bench bot``, those hand-offs were a third of the bot's CPU. There the whole
transaction runs at once on the event loop thread instead (:class:`SqliteFastPath`): a few statements on
a local WAL file without fsync take tens of microseconds, less than one thread hand-off. It can never
block the loop for long: it does not wait for locks (busy timeout 0; a locked database sends the
transaction to a worker thread that waits as usual) and it never checkpoints (the worker does, off the
loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table, event
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import NullPool

log = logging.getLogger(__name__)
T = TypeVar("T")

SQLITE_BUSY_TIMEOUT_MS = 30_000
CHECKPOINT_EVERY = 500  # inline commits between two passive WAL checkpoints in the worker thread


class Base(DeclarativeBase):
    pass


def _sqlite_pragmas(dbapi_conn: Any, busy_timeout_ms: int, autocheckpoint: bool) -> None:
    cursor = dbapi_conn.cursor()
    # WAL lets readers run beside the single writer; busy_timeout waits out short locks.
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: no fsync per commit (the WAL is synced at checkpoints); safe against app crashes,
    # a power loss may drop the last commits — whole transactions, never half of one.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    cursor.execute("PRAGMA foreign_keys=ON")
    if not autocheckpoint:
        cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


def sqlite_file(url: str) -> str | None:
    """The database file of a SQLite URL; None for an in-memory or ``file:`` URI database."""
    database = make_url(url).database
    return database if database and database != ":memory:" and not database.startswith("file:") else None


def create_engine(url: str) -> AsyncEngine:
    if url.startswith("sqlite"):
        path = sqlite_file(url)
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(engine.sync_engine, "connect",
                     lambda conn, _record: _sqlite_pragmas(conn, SQLITE_BUSY_TIMEOUT_MS, autocheckpoint=True))
        if path:
            _FAST_PATHS[engine] = SqliteFastPath(path)
        return engine
    return create_async_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def conflict_insert(engine: AsyncEngine, table: Table) -> postgresql.Insert | sqlite.Insert:
    """An INSERT that takes ``ON CONFLICT`` clauses, in the engine's dialect (PostgreSQL or SQLite)."""
    return postgresql.insert(table) if engine.dialect.name == "postgresql" else sqlite.insert(table)


async def dispose_engine(engine: AsyncEngine) -> None:
    fast = _FAST_PATHS.pop(engine, None)
    if fast is not None:
        fast.close()
    await engine.dispose()


async def run_in_transaction(engine: AsyncEngine, work: Callable[[Connection], T]) -> T:
    """``work(connection)`` in one transaction, committed when it returns, rolled back when it raises.

    ``work`` is synchronous and must touch nothing but the database (on a busy SQLite file it may run a
    second time, after the first attempt was rolled back).
    """
    fast = _FAST_PATHS.get(engine)
    if fast is not None:
        return await fast.run(work)
    async with engine.begin() as conn:
        return await conn.run_sync(work)


class SqliteFastPath:
    """Small transactions on a SQLite file: inline when the database is free, else in a worker thread."""

    def __init__(self, path: str) -> None:
        url = f"sqlite+pysqlite:///{path}"
        # NullPool + one kept connection: the inline path is used from the loop thread only, never reentered
        # (``work`` cannot await), so one connection suffices.
        self._inline_engine = create_sync_engine(url, poolclass=NullPool,
                                                 connect_args={"timeout": 0, "check_same_thread": False})
        event.listen(self._inline_engine, "connect",
                     lambda conn, _record: _sqlite_pragmas(conn, 0, autocheckpoint=False))
        self._worker_engine: Engine = create_sync_engine(url, poolclass=NullPool,
                                                         connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
                                                                       "check_same_thread": False})
        event.listen(self._worker_engine, "connect",
                     lambda conn, _record: _sqlite_pragmas(conn, SQLITE_BUSY_TIMEOUT_MS, autocheckpoint=True))
        self._inline: Connection | None = None
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sqlite-fast-path")
        self._worker_conn: Connection | None = None
        self._commits = 0
        self._checkpointing = False

    async def run(self, work: Callable[[Connection], T]) -> T:
        try:
            result = self._run_inline(work)
        except OperationalError as exc:
            if not _is_busy(exc):
                raise
            return await asyncio.get_running_loop().run_in_executor(self._worker, self._run_in_worker, work)
        self._commits += 1
        if self._commits >= CHECKPOINT_EVERY and not self._checkpointing:
            self._commits = 0
            self._checkpointing = True
            future = asyncio.get_running_loop().run_in_executor(self._worker, self._checkpoint)
            future.add_done_callback(self._checkpoint_done)
        return result

    def _run_inline(self, work: Callable[[Connection], T]) -> T:
        if self._inline is None or self._inline.closed:
            self._inline = self._inline_engine.connect()
        with self._inline.begin():
            return work(self._inline)

    def _worker_connection(self) -> Connection:
        if self._worker_conn is None or self._worker_conn.closed:
            self._worker_conn = self._worker_engine.connect()
        return self._worker_conn

    def _run_in_worker(self, work: Callable[[Connection], T]) -> T:
        conn = self._worker_connection()
        with conn.begin():
            return work(conn)

    def _checkpoint(self) -> None:
        conn = self._worker_connection()
        # A statement outside begin() autobegins a transaction that nobody ends: the next locked write on
        # this connection would then fail in its own begin(). The PRAGMA does not open a SQLite transaction.
        with conn.begin():
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _checkpoint_done(self, future: asyncio.Future[None]) -> None:
        self._checkpointing = False
        if not future.cancelled() and future.exception() is not None:
            log.warning("WAL checkpoint failed: %s", future.exception())

    def close(self) -> None:
        self._worker.shutdown(wait=True)  # a running checkpoint or fallback finishes first
        for conn in (self._inline, self._worker_conn):
            if conn is not None:
                conn.close()
        self._inline_engine.dispose()
        self._worker_engine.dispose()


def _is_busy(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "locked" in message or "busy" in message


_FAST_PATHS: weakref.WeakKeyDictionary[AsyncEngine, SqliteFastPath] = weakref.WeakKeyDictionary()


def session_factory(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)
