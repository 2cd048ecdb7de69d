"""run_in_transaction: one transaction per call, inline on a SQLite file, a worker thread when it is locked."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, insert, select, text

from infra import db
from infra.db import create_engine, dispose_engine, run_in_transaction

METADATA = MetaData()
ITEMS = Table("items", METADATA, Column("id", Integer, primary_key=True))


async def _engine_with_table(path: Path):  # type: ignore[no-untyped-def]
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(METADATA.create_all)
    return engine


async def _ids(engine) -> list[int]:  # type: ignore[no-untyped-def]
    async with engine.connect() as conn:
        return list((await conn.execute(select(ITEMS.c.id).order_by(ITEMS.c.id))).scalars())


async def test_commits_on_return_and_rolls_back_on_error(tmp_path: Path) -> None:
    engine = await _engine_with_table(tmp_path / "a.db")
    try:
        assert engine in db._FAST_PATHS  # a SQLite file takes the inline path
        await run_in_transaction(engine, lambda conn: conn.execute(insert(ITEMS), [{"id": 1}, {"id": 2}]))

        def half_then_fail(conn):  # type: ignore[no-untyped-def]
            conn.execute(insert(ITEMS).values(id=3))
            raise ValueError("boom")

        with pytest.raises(ValueError):
            await run_in_transaction(engine, half_then_fail)
        # the aiosqlite connections of the same engine see the committed rows, and not the rolled-back one
        assert await _ids(engine) == [1, 2]
    finally:
        await dispose_engine(engine)


async def test_a_locked_database_waits_in_a_worker_thread_not_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    engine = await _engine_with_table(path)
    holder = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    holder.execute("INSERT INTO items (id) VALUES (10)")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    try:
        release.start()
        await run_in_transaction(engine, lambda conn: conn.execute(insert(ITEMS).values(id=11)))
        # the write waited for the lock (about 0.5 s) while the event loop kept running
        assert ticks >= 10
        assert await _ids(engine) == [10, 11]
    finally:
        ticking.cancel()
        release.join()
        holder.close()
        await dispose_engine(engine)


async def test_an_error_that_is_not_a_lock_is_raised_as_is(tmp_path: Path) -> None:
    engine = await _engine_with_table(tmp_path / "e.db")
    try:
        with pytest.raises(Exception, match="no such table"):
            await run_in_transaction(engine, lambda conn: conn.execute(text("SELECT * FROM missing")))
    finally:
        await dispose_engine(engine)


async def test_inline_commits_are_checkpointed_off_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "CHECKPOINT_EVERY", 5)
    engine = await _engine_with_table(tmp_path / "c.db")
    fast = db._FAST_PATHS[engine]
    checkpoints: list[str] = []
    original = fast._checkpoint

    def counting() -> None:
        checkpoints.append(threading.current_thread().name)
        original()

    monkeypatch.setattr(fast, "_checkpoint", counting)
    try:
        for n in range(12):
            await run_in_transaction(engine, lambda conn, n=n: conn.execute(insert(ITEMS).values(id=n)))
            await asyncio.sleep(0.02)  # a checkpoint still running when the next one is due is not doubled
        await asyncio.sleep(0.2)
        assert len(checkpoints) == 2
        assert all(name.startswith("sqlite-fast-path") for name in checkpoints)
        assert len(await _ids(engine)) == 12
    finally:
        await dispose_engine(engine)


async def test_a_locked_write_after_a_checkpoint_still_commits_in_the_worker(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by ``anchorgpu bench soak``: the checkpoint left the worker's connection inside a transaction
    (SQLAlchemy's autobegin), so every later locked write failed with "can't call begin() here"."""
    monkeypatch.setattr(db, "CHECKPOINT_EVERY", 2)
    path = tmp_path / "k.db"
    engine = await _engine_with_table(path)
    try:
        for n in range(3):
            await run_in_transaction(engine, lambda conn, n=n: conn.execute(insert(ITEMS).values(id=n)))
        await asyncio.sleep(0.2)  # the checkpoint ran in the worker
        holder = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
        release.start()
        try:
            await run_in_transaction(engine, lambda conn: conn.execute(insert(ITEMS).values(id=99)))
        finally:
            release.join()
            holder.close()
        assert await _ids(engine) == [0, 1, 2, 99]
    finally:
        await dispose_engine(engine)


async def test_memory_databases_use_the_async_driver(tmp_path: Path) -> None:
    engine = create_engine("sqlite+aiosqlite:///:memory:")
    try:
        assert engine not in db._FAST_PATHS  # another connection would see another, empty database
        async with engine.begin() as conn:
            await conn.run_sync(METADATA.create_all)
        await run_in_transaction(engine, lambda conn: conn.execute(insert(ITEMS).values(id=1)))
        assert await run_in_transaction(engine, lambda conn: conn.execute(select(ITEMS.c.id)).scalar()) == 1
    finally:
        await dispose_engine(engine)
