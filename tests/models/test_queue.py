"""The fair request queue: round-robin across users, bounded, positions, cancellation."""

from __future__ import annotations

import asyncio

import pytest

from models.queue import QueueFullError, RequestCancelledError, RequestQueue, Ticket


async def _serve_all(queue: RequestQueue, tickets: list[Ticket]) -> list[str]:
    """Release the running ticket until all are served; the order of service as 'user:number'."""
    served: list[str] = []
    pending = list(tickets)
    while pending:
        running = [t for t in pending if t.granted]
        assert len(running) == 1, "one slot: exactly one request runs at a time"
        ticket = running[0]
        served.append(f"{ticket.user}:{ticket.number}")
        pending.remove(ticket)
        ticket.release()
    return served


async def test_one_user_cannot_starve_the_others() -> None:
    queue = RequestQueue(max_waiting=10, parallel=1)
    flood = [queue.enqueue("alice") for _ in range(5)]
    bob = queue.enqueue("bob")
    carol = queue.enqueue("carol")

    assert flood[0].granted and flood[0].position == 0
    # Bob and Carol wait behind one of Alice's requests, not behind all four of them.
    assert [flood[1].position, bob.position, carol.position] == [1, 2, 3]
    assert [t.position for t in flood[2:]] == [4, 5, 6]

    order = await _serve_all(queue, [*flood, bob, carol])
    assert order == ["alice:1", "alice:2", "bob:6", "carol:7", "alice:3", "alice:4", "alice:5"]
    assert queue.waiting == 0 and queue.running == 0


async def test_full_queue_refuses_at_once_with_an_estimate() -> None:
    queue = RequestQueue(max_waiting=2, parallel=1, initial_service_s=7.2)
    running = queue.enqueue("a")
    queue.enqueue("b")
    queue.enqueue("c")
    with pytest.raises(QueueFullError) as refused:
        queue.enqueue("d")
    assert refused.value.retry_after_s == 8
    assert "try again in 8 s" in str(refused.value)
    running.release()
    queue.enqueue("d")  # a place freed up


async def test_positions_are_streamed_and_the_slot_granted() -> None:
    queue = RequestQueue(max_waiting=5, parallel=1)
    first = queue.enqueue("a")
    second = queue.enqueue("b")
    third = queue.enqueue("c")
    seen: list[int] = []

    async def wait() -> None:
        async for position in third.wait_turn():
            seen.append(position)

    waiter = asyncio.create_task(wait())
    await asyncio.sleep(0.01)
    first.release()
    await asyncio.sleep(0.01)
    second.release()
    await asyncio.wait_for(waiter, 1)
    assert seen == [2, 1]
    assert third.granted and third.position == 0


async def test_cancel_removes_waiting_and_flags_running_requests() -> None:
    queue = RequestQueue(max_waiting=5, parallel=1)
    running = queue.enqueue("u1", tag="chat:1")
    waiting = queue.enqueue("u1", tag="chat:1")
    other = queue.enqueue("u2", tag="chat:2")
    assert other.position == 2

    async def wait() -> None:
        async for _ in waiting.wait_turn():
            pass

    waiter = asyncio.create_task(wait())
    await asyncio.sleep(0.01)
    assert queue.cancel("chat:1") == 2
    with pytest.raises(RequestCancelledError):
        await asyncio.wait_for(waiter, 1)
    assert running.cancel.is_set()  # the generator sees this flag and stops
    assert other.position == 1 and queue.waiting == 1
    running.release()
    assert other.granted
    assert queue.cancel("nobody") == 0


async def test_service_time_estimate_follows_real_durations() -> None:
    queue = RequestQueue(max_waiting=5, parallel=2, initial_service_s=100.0)
    ticket = queue.enqueue("a")
    await asyncio.sleep(0.05)
    ticket.release()
    assert queue.avg_service_s < 1.0
    assert queue.retry_after_s() == 1
    assert queue.estimated_wait_s(4) == 1
