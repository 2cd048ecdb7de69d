"""MicroBatcher: calls of one event-loop turn share one batch; failures and cancellations stay contained."""

from __future__ import annotations

import asyncio

import pytest

from infra.batching import MicroBatcher


class Recorder:
    def __init__(self, delay_s: float = 0.0, fail_on: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.delay_s = delay_s
        self.fail_on = fail_on

    async def __call__(self, items: list[int]) -> list[int]:
        self.batches.append(items)
        await asyncio.sleep(self.delay_s)
        if self.fail_on is not None and self.fail_on in items:
            raise RuntimeError("database down")
        return [item * 10 for item in items]


async def test_calls_made_in_one_turn_share_one_batch() -> None:
    recorder = Recorder()
    batcher = MicroBatcher(recorder)
    results = await asyncio.gather(*(batcher.submit(n) for n in range(8)))
    assert results == [n * 10 for n in range(8)]
    assert recorder.batches == [list(range(8))]


async def test_calls_arriving_during_a_batch_form_the_next_one() -> None:
    recorder = Recorder(delay_s=0.05)
    batcher = MicroBatcher(recorder)
    first = asyncio.gather(*(batcher.submit(n) for n in (1, 2)))
    await asyncio.sleep(0.01)  # the first batch is in flight
    second = asyncio.gather(*(batcher.submit(n) for n in (3, 4, 5)))
    assert await first == [10, 20] and await second == [30, 40, 50]
    assert recorder.batches == [[1, 2], [3, 4, 5]]


async def test_a_failed_batch_fails_its_callers_only() -> None:
    recorder = Recorder(delay_s=0.02, fail_on=2)
    batcher = MicroBatcher(recorder)
    doomed = [asyncio.ensure_future(batcher.submit(n)) for n in (1, 2)]
    await asyncio.sleep(0.005)
    later = batcher.submit(3)
    for future in doomed:
        with pytest.raises(RuntimeError, match="database down"):
            await future
    assert await later == 30


async def test_a_cancelled_caller_does_not_block_the_others() -> None:
    recorder = Recorder(delay_s=0.02)
    batcher = MicroBatcher(recorder)
    gone = asyncio.ensure_future(batcher.submit(1))
    kept = asyncio.ensure_future(batcher.submit(2))
    gone.cancel()
    assert await kept == 20
    assert recorder.batches == [[2]], "a caller cancelled before the batch ran is left out"
    await batcher.aclose()


async def test_max_batch_splits_large_bursts() -> None:
    recorder = Recorder()
    batcher = MicroBatcher(recorder, max_batch=3)
    assert await asyncio.gather(*(batcher.submit(n) for n in range(7))) == [n * 10 for n in range(7)]
    assert [len(b) for b in recorder.batches] == [3, 3, 1]


async def test_lingering_batches_collect_calls_from_later_turns_and_flush_on_close() -> None:
    recorder = Recorder()
    batcher = MicroBatcher(recorder, linger_s=0.2)
    early = asyncio.ensure_future(batcher.submit(1))
    await asyncio.sleep(0.05)  # several loop turns later, still inside the window
    late = asyncio.ensure_future(batcher.submit(2))
    assert await early == 10 and await late == 20
    assert recorder.batches == [[1, 2]]
    waiting = asyncio.ensure_future(batcher.submit(3))
    await asyncio.sleep(0)
    await batcher.aclose()  # shutting down does not wait out the window, nor drop the item
    assert waiting.done() and waiting.result() == 30
    assert recorder.batches == [[1, 2], [3]]
