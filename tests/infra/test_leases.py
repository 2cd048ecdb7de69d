"""Database leases on both engines: of two owners one wins, the holder renews, an expired lease is taken
over, and the periodic runner works on the holder only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from infra.leases import Lease, run_exclusively
from infra.migrate import migrate


@pytest.fixture
async def engine(sql_engine: AsyncEngine) -> AsyncEngine:
    await migrate(sql_engine)
    return sql_engine


async def test_two_owners_one_wins(engine: AsyncEngine) -> None:
    a, b = Lease(engine, "job", "replica-a", ttl_s=30), Lease(engine, "job", "replica-b", ttl_s=30)
    wins = await asyncio.gather(*(lease.acquire() for _ in range(5) for lease in (a, b)))
    winners = {lease.owner for lease, won in zip([a, b] * 5, wins, strict=True) if won}
    assert len(winners) == 1
    winner, loser = (a, b) if winners == {"replica-a"} else (b, a)
    assert await engine_holder(engine) == winner.owner
    assert await winner.acquire(), "the holder asking again keeps it"
    assert not await loser.acquire()
    assert not await loser.renew()
    assert await winner.renew()
    assert await winner.holder() == winner.owner
    # another name is another lease
    assert await Lease(engine, "other-job", loser.owner, ttl_s=30).acquire()


async def engine_holder(engine: AsyncEngine) -> str | None:
    return await Lease(engine, "job", "observer").holder()


async def test_expired_lease_is_taken_over(engine: AsyncEngine) -> None:
    dead = Lease(engine, "job", "killed", ttl_s=0.3)
    alive = Lease(engine, "job", "survivor", ttl_s=30)
    assert await dead.acquire()
    assert not await alive.acquire()
    await asyncio.sleep(0.45)  # the killed owner never renews
    assert await dead.holder() is None
    assert await alive.acquire()
    assert await alive.holder() == "survivor"
    assert not await dead.renew(), "a taken-over owner cannot renew"
    assert not await dead.acquire()


async def test_renewal_keeps_a_short_lease(engine: AsyncEngine) -> None:
    holder = Lease(engine, "job", "holder", ttl_s=0.3)
    other = Lease(engine, "job", "other", ttl_s=0.3)
    assert await holder.acquire()
    for _ in range(4):  # 0.6 s in all, twice the ttl, renewed every 0.15 s
        await asyncio.sleep(0.15)
        assert await holder.renew()
        assert not await other.acquire()


async def test_release_hands_over_at_once(engine: AsyncEngine) -> None:
    first, second = Lease(engine, "job", "first", ttl_s=30), Lease(engine, "job", "second", ttl_s=30)
    assert await first.acquire()
    await second.release()  # not the holder: nothing happens
    assert not await second.acquire()
    await first.release()
    assert await second.acquire()


async def test_runner_works_on_one_replica_and_takes_over_a_dead_one(engine: AsyncEngine) -> None:
    ran: list[str] = []

    def work_of(owner: str) -> Callable[[], Awaitable[None]]:
        async def work() -> None:
            ran.append(owner)
        return work

    # a replica that was killed holding the lease: it never renews and never releases
    assert await Lease(engine, "poll", "killed", ttl_s=0.6).acquire()
    loops = [asyncio.create_task(run_exclusively(Lease(engine, "poll", name, ttl_s=0.6), 0.1, work_of(name)))
             for name in ("replica-a", "replica-b")]
    try:
        await asyncio.sleep(0.3)
        assert ran == [], "nobody works while the killed holder's lease is live"
        await asyncio.sleep(0.9)
        assert len(ran) >= 3, ran
        assert len(set(ran)) == 1, f"one replica at a time: {ran}"
        holder = ran[0]
        # the holder stops cleanly: it releases, and the other replica carries on
        running = loops[0] if holder == "replica-a" else loops[1]
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        before = len(ran)
        await asyncio.sleep(0.5)
        assert set(ran[before:]) == {"replica-b" if holder == "replica-a" else "replica-a"}, ran
    finally:
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)


async def test_a_failing_job_keeps_its_schedule(engine: AsyncEngine) -> None:
    calls = 0

    async def flaky() -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("boom")

    loop = asyncio.create_task(run_exclusively(Lease(engine, "flaky", "me", ttl_s=0.6), 0.1, flaky))
    await asyncio.sleep(0.45)
    loop.cancel()
    await asyncio.gather(loop, return_exceptions=True)
    assert calls >= 2
    assert await Lease(engine, "flaky", "next").acquire(), "cancelling released the lease"
