"""The quote store and its idempotency keys, for real on SQLite and on PostgreSQL.

PostgreSQL runs get their own schema (dropped afterwards), so parallel runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.data import GpuData
from gpu.quote.request import QuoteInputError
from gpu.quote.service import QuoteService
from gpu.quote.store import IdempotencyConflictError
from tests.conftest import DATA_DIR


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def engine(sql_engine: AsyncEngine) -> AsyncEngine:
    return sql_engine


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped data, so a test can change prices."""
    target = tmp_path / "data"
    target.mkdir()
    for name in ("prices.yaml", "gpus.yaml"):
        shutil.copy(DATA_DIR / name, target / name)
    return target


@pytest.fixture
async def service(engine: AsyncEngine, data_dir: Path) -> QuoteService:
    svc = QuoteService(engine, GpuData(data_dir), retention_hours=24, clock=Clock())
    await svc.start()
    return svc


async def test_same_key_same_request_replays_the_original_even_after_prices_change(
        service: QuoteService, data_dir: Path) -> None:
    first = await service.quote_text("h100 x8 2 weeks", owner="u1", key="order-0001")
    prices = data_dir / "prices.yaml"
    prices.write_text(prices.read_text().replace('on_demand: "2.99"', 'on_demand: "3.49"')
                      .replace('version: "2026-11-01.example-1"', 'version: "raised"'))
    # a differently spelled but identical request, after the price change
    again = await service.quote_text("8x h100-sxm 14 days on-demand", owner="u1", key="order-0001")
    fresh = await service.quote_text("h100 x8 2 weeks", owner="u1", key="order-0002")
    assert not first.replayed and again.replayed
    assert again.quote_id == first.quote_id and again.quote == first.quote
    assert str(again.quote.total) == "8037.12" and again.quote.price_list_version == "2026-11-01.example-1"
    assert fresh.quote.price_list_version == "raised" and fresh.quote.total > first.quote.total
    assert await service.store.count("u1") == 2


async def test_same_key_different_request_is_refused_and_writes_nothing(service: QuoteService) -> None:
    first = await service.quote_text("h100 x8 2 weeks", owner="u1", key="order-0001")
    with pytest.raises(IdempotencyConflictError) as info:
        await service.quote_text("h100 x4 2 weeks", owner="u1", key="order-0001")
    assert first.quote_id in str(info.value) and "different" in str(info.value)
    assert info.value.original.quote_id == first.quote_id
    assert await service.store.count() == 1


async def test_keys_are_scoped_per_owner(service: QuoteService) -> None:
    one = await service.quote_text("h100 x8 2 weeks", owner="u1", key="shared-key")
    two = await service.quote_text("l4 x1 3 hours", owner="u2", key="shared-key")
    assert one.quote_id != two.quote_id and not two.replayed


@pytest.mark.parametrize("key", ["abc", "x" * 129, "has space", "ключ-кириллицей", "semi;colon", ""])
async def test_invalid_keys_are_rejected_before_anything_is_written(service: QuoteService, key: str) -> None:
    with pytest.raises(QuoteInputError) as info:
        await service.issue(service.parse("h100 x8 2 weeks").request, owner="u1", key=key, request_text="x")
    assert info.value.code == "bad_key"
    assert await service.store.count() == 0


async def test_bad_input_with_a_key_does_not_consume_it(service: QuoteService) -> None:
    with pytest.raises(QuoteInputError):
        await service.quote_text("mi300x 2 weeks spot", owner="u1", key="order-0003")
    ok = await service.quote_text("mi300x 2 weeks", owner="u1", key="order-0003")
    assert not ok.replayed


async def test_keys_are_kept_for_the_retention_period_then_may_be_reused(service: QuoteService) -> None:
    clock = service.clock
    assert isinstance(clock, Clock)
    first = await service.quote_text("h100 x8 2 weeks", owner="u1", key="order-0004")
    clock.now += dt.timedelta(hours=23, minutes=59)
    assert (await service.quote_text("h100 x8 2 weeks", owner="u1", key="order-0004")).quote_id == first.quote_id
    with pytest.raises(IdempotencyConflictError):
        await service.quote_text("h100 x1 2 weeks", owner="u1", key="order-0004")
    clock.now += dt.timedelta(minutes=2)
    later = await service.quote_text("h100 x1 2 weeks", owner="u1", key="order-0004")
    assert later.quote_id != first.quote_id and not later.replayed
    assert await service.get(first.quote_id) is not None  # the old quote itself is kept
    assert await service.store.purge_expired_keys(clock.now + dt.timedelta(days=2)) == 1


async def test_recent_lists_the_owners_quotes_newest_first(service: QuoteService) -> None:
    clock = service.clock
    assert isinstance(clock, Clock)
    ids = []
    for text_ in ("h100 x8 2 weeks", "l4 3 hours", "a100 x2 1 month committed"):
        ids.append((await service.quote_text(text_, owner="u1")).quote_id)
        clock.now += dt.timedelta(minutes=1)
    await service.quote_text("l4 3 hours", owner="someone-else")
    assert [q.quote_id for q in await service.recent("u1")] == ids[::-1]


async def test_a_thousand_concurrent_same_key_requests_store_exactly_one_quote(service: QuoteService) -> None:
    request = service.parse("h100 x8 2 weeks").request
    results = await asyncio.gather(*(
        service.issue(request, owner="race", key="race-key-1", request_text="h100 x8 2 weeks")
        for _ in range(1000)))
    assert len({r.quote_id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1
    assert await service.store.count("race") == 1


async def test_concurrent_conflicting_requests_never_write_a_second_quote(service: QuoteService) -> None:
    requests = [service.parse(f"h100 x{n} 2 weeks").request for n in (1, 2, 3, 4)]
    outcomes = await asyncio.gather(*(
        service.issue(requests[i % 4], owner="race", key="race-key-2", request_text="x") for i in range(200)),
        return_exceptions=True)
    winners = {o.quote_id for o in outcomes if not isinstance(o, BaseException)}
    assert len(winners) == 1
    assert all(isinstance(o, IdempotencyConflictError) for o in outcomes if isinstance(o, BaseException))
    assert await service.store.count("race") == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.sampled_from(["h100 x8 2 weeks", "a100 x2 45 days spot", "l4 3 hours",
                              "h200 x4 1 month 2 weeks committed"]),
       second=st.sampled_from(["h100 x8 2 weeks", "a100 x2 45 days spot", "l4 3 hours",
                               "h200 x4 1 month 2 weeks committed"]),
       repeats=st.integers(1, 3))
async def test_replay_never_changes_anything_and_a_conflict_never_writes(
        service: QuoteService, first: str, second: str, repeats: int) -> None:
    key = f"prop-{uuid.uuid4().hex}"
    original = await service.quote_text(first, owner="prop", key=key)
    before = await service.store.count("prop")
    for _ in range(repeats):
        replay = await service.quote_text(first, owner="prop", key=key)
        assert replay.replayed and replay.quote_id == original.quote_id and replay.quote == original.quote
        if second != first:
            with pytest.raises(IdempotencyConflictError):
                await service.quote_text(second, owner="prop", key=key)
    assert await service.store.count("prop") == before
    stored = await service.get(original.quote_id)
    assert stored is not None and stored.quote == original.quote
