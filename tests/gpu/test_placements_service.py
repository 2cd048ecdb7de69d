"""PlacementService on both engines: idempotency, ownership, audit trail, concurrency, prices and the clock."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import shutil
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.data import GpuData
from gpu.placements.engine import EXPIRED, RUNNING, STOPPED, PlacementStateError
from gpu.placements.service import PlacementConflictError, PlacementInputError, PlacementService
from gpu.placements.store import PlacementNotFoundError
from gpu.quote.request import QuoteInputError
from gpu.quote.service import QuoteService
from tests.conftest import DATA_DIR


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A private copy of the shipped data, so a test can change prices."""
    target = tmp_path / "data"
    target.mkdir()
    for name in ("prices.yaml", "gpus.yaml", "models.yaml"):
        shutil.copy(DATA_DIR / name, target / name)
    return target


def make_service(engine: AsyncEngine, data_dir: Path, clock: Clock) -> PlacementService:
    data = GpuData(data_dir)
    return PlacementService(engine, data, QuoteService(engine, data, clock=clock), clock=clock)


@pytest.fixture
def service(sql_engine: AsyncEngine, data_dir: Path, clock: Clock) -> PlacementService:
    return make_service(sql_engine, data_dir, clock)


async def test_rent_replays_the_original_result_also_after_a_restart(
        service: PlacementService, sql_engine: AsyncEngine, data_dir: Path, clock: Clock) -> None:
    first = await service.rent_text("h100 x8 1 week committed", owner="tg:1", key="rent-0001")
    assert not first.replayed and first.placement.quote_id is not None
    clock.now += dt.timedelta(minutes=5)
    again = await service.rent_text("8x h100-sxm 7 days committed", owner="tg:1", key="rent-0001")
    assert again.replayed and again.placement == first.placement and again.as_of == first.as_of
    restarted = make_service(sql_engine, data_dir, clock)  # a new process: nothing cached
    replay = await restarted.rent_text("h100 x8 1 week committed", owner="tg:1", key="rent-0001")
    assert replay.replayed and replay.placement.id == first.placement.id
    assert await restarted.store.count("tg:1") == 1


async def test_same_key_with_another_operation_or_configuration_is_refused_and_writes_nothing(
        service: PlacementService) -> None:
    first = await service.rent_text("h100 x8 1 week committed", owner="tg:1", key="rent-0002")
    with pytest.raises(PlacementConflictError):
        await service.rent_text("h100 x4 1 week committed", owner="tg:1", key="rent-0002")
    with pytest.raises(PlacementConflictError):
        await service.stop(first.placement.id, owner="tg:1", key="rent-0002")
    with pytest.raises(PlacementConflictError):
        await service.extend(first.placement.id, "1 week", owner="tg:1", key="rent-0002")
    placement = await service.get(first.placement.id, owner="tg:1")
    assert placement == first.placement  # untouched
    assert [e["action"] for e in await service.history(first.placement.id, owner="tg:1")] == ["rent"]
    assert await service.store.count("tg:1") == 1


async def test_keys_are_scoped_per_owner(service: PlacementService) -> None:
    a = await service.rent_text("h100 x8 1 week committed", owner="tg:1", key="shared-key")
    b = await service.rent_text("l4 x1 3 hours", owner="tg-chat:-100", key="shared-key")
    assert a.placement.id != b.placement.id and not b.replayed


async def test_another_owners_placement_or_quote_reads_as_not_found(service: PlacementService) -> None:
    mine = await service.rent_text("h100 x8 1 week committed", owner="tg:1")
    for call in (service.get(mine.placement.id, owner="tg:2"), service.stop(mine.placement.id, owner="tg:2"),
                 service.start(mine.placement.id, owner="tg:2"),
                 service.extend(mine.placement.id, "1 week", owner="tg:2"),
                 service.get("P-AAAAAAAAAAAAAAAA", owner="tg:1")):
        with pytest.raises(PlacementNotFoundError):
            await call
    assert [p.id for p in await service.owned("tg:2")] == []
    assert mine.placement.quote_id is not None
    with pytest.raises(PlacementNotFoundError):
        await service.rent_quote(mine.placement.quote_id, owner="tg:2")
    with pytest.raises(PlacementInputError):
        await service.stop("12345", owner="tg:1")


async def test_rent_a_stored_quote_at_its_prices(service: PlacementService, clock: Clock) -> None:
    issued = await service.quotes.quote_text("h100 x8 1 month committed", owner="tg:1")
    rented = await service.rent_quote(issued.quote_id, owner="tg:1", key="from-quote-1")
    assert rented.placement.quote_id == issued.quote_id and rented.placement.prepaid == issued.quote.total
    assert rented.placement.paid_until == clock.now + dt.timedelta(days=30)
    clock.now = issued.quote.valid_until + dt.timedelta(seconds=1)
    with pytest.raises(PlacementStateError) as refused:
        await service.rent_quote(issued.quote_id, owner="tg:1")
    assert refused.value.code == "quote_expired"


async def test_stop_start_extend_lifecycle_with_audit_trail(service: PlacementService, clock: Clock) -> None:
    rented = await service.rent_text("h100 x8 1 week committed", owner="tg-chat:-100", actor="tg:7")
    pid, paid_until = rented.placement.id, rented.placement.paid_until
    assert paid_until is not None
    clock.now += dt.timedelta(hours=2)
    stopped = await service.stop(pid, owner="tg-chat:-100", actor="tg:8")
    assert stopped.placement.status(clock.now) == STOPPED and stopped.placement.paid_until == paid_until
    assert not (await service.stop(pid, owner="tg-chat:-100")).changed
    clock.now += dt.timedelta(days=3)
    extended = await service.extend(pid, "2 weeks", owner="tg-chat:-100", key="ext-0001")
    assert extended.placement.paid_until == paid_until + dt.timedelta(days=14)  # from paid_until, not now
    assert extended.extension is not None and extended.extension["hours"] == 336
    replay = await service.extend(pid, "14 days", owner="tg-chat:-100", key="ext-0001")
    assert replay.replayed and replay.placement.paid_until == extended.placement.paid_until
    started = await service.start(pid, owner="tg-chat:-100")
    assert started.placement.status(clock.now) == RUNNING
    events = await service.history(pid, owner="tg-chat:-100")
    assert [(e["action"], e["actor"]) for e in events] == [
        ("rent", "tg:7"), ("stop", "tg:8"), ("extend", "tg-chat:-100"), ("start", "tg-chat:-100")]
    assert events[2]["idempotency_key"] == "ext-0001" and events[1]["at"] == rented.as_of + dt.timedelta(hours=2)


async def test_expiry_follows_the_clock_and_start_is_refused(service: PlacementService, clock: Clock) -> None:
    rented = await service.rent_text("l4 x1 1 day committed", owner="tg:1")
    await service.stop(rented.placement.id, owner="tg:1")
    clock.now += dt.timedelta(days=1)
    [listed] = await service.owned("tg:1")
    assert listed.status(clock.now) == EXPIRED
    with pytest.raises(PlacementStateError) as refused:
        await service.start(rented.placement.id, owner="tg:1")
    assert refused.value.code == "paid_period_over"
    with pytest.raises(PlacementStateError):
        await service.extend(rented.placement.id, "1 day", owner="tg:1")


async def test_extend_is_priced_by_the_current_price_list(service: PlacementService, data_dir: Path,
                                                           clock: Clock) -> None:
    rented = await service.rent_text("h100 x8 1 week committed", owner="tg:1")
    prices = data_dir / "prices.yaml"
    text = prices.read_text(encoding="utf-8")
    assert 'on_demand: "2.99"' in text
    prices.write_text(text.replace('on_demand: "2.99"', 'on_demand: "5.98"', 1), encoding="utf-8")
    clock.now += dt.timedelta(hours=1)
    extended = await service.extend(rented.placement.id, "1 week", owner="tg:1")
    assert extended.extension is not None
    assert extended.placement.prepaid - rented.placement.prepaid == 2 * rented.placement.prepaid


@pytest.mark.parametrize("text", ["-1 week", "36 hours", "forever", "0 days"])
async def test_bad_extension_durations_are_input_errors(service: PlacementService, text: str) -> None:
    rented = await service.rent_text("h100 x8 1 week committed", owner="tg:1")
    with pytest.raises(QuoteInputError):
        await service.extend(rented.placement.id, text, owner="tg:1")


async def test_a_thousand_concurrent_same_key_rents_make_one_placement(service: PlacementService) -> None:
    results = await asyncio.gather(*(
        service.rent_text("h100 x8 1 week committed", owner="race", key="race-key-1") for _ in range(1000)))
    assert len({r.placement.id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1
    assert await service.store.count("race") == 1
    assert await service.quotes.store.count("race") == 1  # the quote behind it is shared as well


async def test_concurrent_rents_of_one_quote_with_one_key_make_one_placement(service: PlacementService) -> None:
    issued = await service.quotes.quote_text("h100 x8 1 month committed", owner="race")
    results = await asyncio.gather(*(service.rent_quote(issued.quote_id, owner="race", key="race-key-2")
                                     for _ in range(200)))
    assert len({r.placement.id for r in results}) == 1 and await service.store.count("race") == 1


async def test_concurrent_stops_and_starts_keep_one_consistent_history(service: PlacementService) -> None:
    rented = await service.rent_text("h100 x8 2 weeks", owner="race")
    pid = rented.placement.id
    await asyncio.gather(*(service.stop(pid, owner="race") if i % 2 else service.start(pid, owner="race")
                           for i in range(100)))
    events = await service.history(pid, owner="race")
    actions = [e["action"] for e in events]
    # every recorded change alternates: no two stops (or starts) in a row, whatever the interleaving
    assert all(a != b for a, b in itertools.pairwise(actions)) and actions[0] == "rent"
    final = await service.get(pid, owner="race")
    assert final.version == len(events)


async def test_expired_keys_can_be_used_again(service: PlacementService, clock: Clock) -> None:
    first = await service.rent_text("l4 x1 3 hours", owner="tg:1", key="old-key-1")
    clock.now += dt.timedelta(hours=25)
    second = await service.rent_text("l4 x2 3 hours", owner="tg:1", key="old-key-1")
    assert second.placement.id != first.placement.id and not second.replayed


async def test_concurrent_conflicting_rents_with_one_key_make_one_placement(service: PlacementService) -> None:
    texts = [f"h100 x{n} 1 week committed" for n in (1, 2, 3, 4)]
    outcomes = await asyncio.gather(*(service.rent_text(texts[i % 4], owner="race", key="race-key-3")
                                      for i in range(200)), return_exceptions=True)
    winners = {o.placement.id for o in outcomes if not isinstance(o, BaseException)}
    assert len(winners) == 1
    assert all(isinstance(o, PlacementConflictError) for o in outcomes if isinstance(o, BaseException))
    assert await service.store.count("race") == 1
