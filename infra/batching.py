"""Group commit for small database operations made by concurrent tasks.

Every handled update claims its ``update_id``, reads its FSM state and later marks itself done: one tiny
statement each. Run one by one, each costs a transaction of its own (see
:func:`infra.db.run_in_transaction`). A :class:`MicroBatcher` collects the calls made during one turn
of the event loop (aiogram starts every update of a ``getUpdates`` batch in the same turn) and runs them
as one statement; calls that arrive while a batch is in flight form the next one. By default nothing is
delayed by a timer, so a lone call costs one loop turn more; writes nobody waits for (marking an update
done) may ``linger`` a few milliseconds to collect more company.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K")
R = TypeVar("R")


class MicroBatcher(Generic[K, R]):
    """``await submit(item)`` resolves with ``run_batch(items)[i]`` for the batch the item was part of.

    ``run_batch`` gets the items in submission order (duplicates included) and returns one result per
    item; if it raises, every caller in that batch gets the exception.
    """

    def __init__(self, run_batch: Callable[[list[K]], Awaitable[Sequence[R]]], max_batch: int = 256,
                 linger_s: float = 0.0) -> None:
        self._run_batch = run_batch
        self._max_batch = max_batch
        # > 0: the first item of a batch waits this long for company (for writes nobody waits on)
        self._linger_s = linger_s
        self._timer: asyncio.TimerHandle | None = None
        self._pending: list[tuple[K, asyncio.Future[R]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._kick_scheduled = False

    async def submit(self, item: K) -> R:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if self._worker is None and not self._kick_scheduled:
            # After the tasks already scheduled for this turn have queued their items too.
            self._kick_scheduled = True
            if self._linger_s > 0:
                self._timer = loop.call_later(self._linger_s, self._kick)
            else:
                loop.call_soon(self._kick)
        return await future

    def _kick(self) -> None:
        self._kick_scheduled = False
        self._timer = None
        if self._worker is None and self._pending:
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch:]
                live = [(item, future) for item, future in batch if not future.cancelled()]
                if not live:
                    continue
                try:
                    results = await self._run_batch([item for item, _ in live])
                except asyncio.CancelledError:
                    for _, future in live:
                        future.cancel()
                    raise
                except Exception as exc:  # every caller of this batch sees the failure
                    for _, future in live:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), result in zip(live, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._worker = None
            if self._pending:  # cancelled mid-batch: whoever is still waiting gets a new worker
                self._kick()

    async def aclose(self) -> None:
        """Runs what is still waiting (a lingering batch at once) and waits for it."""
        if self._timer is not None:
            self._timer.cancel()
            self._kick()
        worker = self._worker
        if worker is not None:
            await asyncio.gather(worker, return_exceptions=True)
