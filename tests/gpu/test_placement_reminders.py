"""Placement reminders on both engines: which are due, and a claim that exactly one replica wins."""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.placements.reminders import EXPIRED, SOON, ReminderStore, due_kind, telegram_chat_of
from gpu.placements.service import PlacementService
from infra.db import create_engine
from tests.conftest import DATA_DIR
from tests.gpu.test_placements_service import Clock, make_service

H = dt.timedelta(hours=1)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    target.mkdir()
    for name in ("prices.yaml", "gpus.yaml", "models.yaml"):
        shutil.copy(DATA_DIR / name, target / name)
    return target


@pytest.fixture
def service(sql_engine: AsyncEngine, data_dir: Path, clock: Clock) -> PlacementService:
    return make_service(sql_engine, data_dir, clock)


def test_due_kind() -> None:
    start = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    end = start + 7 * 24 * H
    assert due_kind(end, start, end - 25 * H) is None
    assert due_kind(end, start, end - 24 * H) == SOON
    assert due_kind(end, start, end - H) == SOON
    assert due_kind(end, start, end) == EXPIRED
    assert due_kind(end, start, end + 71 * H) == EXPIRED
    assert due_kind(end, start, end + 30 * 24 * H) is None  # long past: not announced any more
    # a one-day period would be reminded "24 h before" at the very moment it was rented: skipped
    assert due_kind(start + 24 * H, start, start + H) is None


def test_telegram_chat_of() -> None:
    assert telegram_chat_of("tg:42") == 42
    assert telegram_chat_of("tg-chat:-100123") == -100123
    assert telegram_chat_of("cli:alice") is None and telegram_chat_of("console:local") is None
    assert telegram_chat_of("tg:abc") is None


async def test_only_one_replica_wins_each_claim(service: PlacementService, sql_engine: AsyncEngine,
                                                clock: Clock) -> None:
    rented = await service.rent_text("h100 x8 1 week committed", owner="tg:7")
    await service.rent_text("h100 x8 1 week committed", owner="cli:alice")  # nobody to remind in Telegram
    paid_until = rented.placement.paid_until
    assert paid_until is not None
    replicas = [ReminderStore(sql_engine, f"replica-{i}") for i in range(4)]

    assert await replicas[0].due(clock.now) == []
    clock.now = paid_until - 23 * H
    due = await replicas[0].due(clock.now)
    assert [(r.placement_id, r.kind, r.owner) for r in due] == [(rented.placement.id, SOON, "tg:7")]
    wins = await asyncio.gather(*(store.claim(due[0], clock.now) for store in replicas for _ in range(3)))
    assert sum(wins) == 1
    assert await replicas[1].due(clock.now) == []  # sent: no replica sees it again
    assert not await replicas[2].claim(due[0], clock.now)

    # an extension moves paid_until: the new end has reminders of its own
    extended = await service.extend(rented.placement.id, "1 week", owner="tg:7")
    new_end = extended.placement.paid_until
    assert new_end == paid_until + 7 * 24 * H
    assert await replicas[0].due(clock.now) == []
    clock.now = new_end + H
    expired = await replicas[3].due(clock.now)
    assert [(r.kind, r.paid_until) for r in expired] == [(EXPIRED, new_end)]
    assert await replicas[3].claim(expired[0], clock.now)


async def test_a_released_claim_is_sent_again_by_any_replica(service: PlacementService, sql_engine: AsyncEngine,
                                                             clock: Clock) -> None:
    rented = await service.rent_text("a100 x2 1 month committed", owner="tg-chat:-1005")
    assert rented.placement.paid_until is not None
    clock.now = rented.placement.paid_until + H
    first, second = ReminderStore(sql_engine, "a"), ReminderStore(sql_engine, "b")
    [reminder] = await first.due(clock.now)
    assert await first.claim(reminder, clock.now)
    await second.release(reminder)  # only the claimer can give it back
    assert await first.due(clock.now) == []
    await first.release(reminder)  # its send failed
    assert [r.kind for r in await second.due(clock.now)] == [EXPIRED]
    assert await second.claim(reminder, clock.now) and not await first.claim(reminder, clock.now)


async def test_two_engines_on_one_sqlite_file_send_once(tmp_path: Path, data_dir: Path, clock: Clock) -> None:
    """Two processes' engines on one file (what two bot replicas on SQLite are)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    engines = [create_engine(url), create_engine(url)]
    try:
        service = make_service(engines[0], data_dir, clock)
        rented = await service.rent_text("h100 x1 2 weeks committed", owner="tg:9")
        assert rented.placement.paid_until is not None
        clock.now = rented.placement.paid_until - 2 * H
        stores = [ReminderStore(engine, f"p{i}") for i, engine in enumerate(engines)]
        [reminder] = await stores[1].due(clock.now)
        wins = await asyncio.gather(*(s.claim(reminder, clock.now) for s in stores for _ in range(4)))
        assert sum(wins) == 1
    finally:
        for engine in engines:
            await engine.dispose()
