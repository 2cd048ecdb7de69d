"""A bounded, fair request queue in front of an LLM backend.

One in-process llama.cpp context serves one request at a time (``parallel`` slots in general). Waiting
requests are served round-robin across users: every user with something waiting gets one turn per
round, in order of arrival of their first waiting request, so one user sending ten questions cannot
starve a group. A full queue refuses at once with an estimate of when to retry.

Usage::

    ticket = queue.enqueue(user="42", tag="chat:-100:7")    # QueueFullError when full
    async for position in ticket.wait_turn():                # 1 = next; ends when the slot is granted
        ...                                                  # show "you are #position in line"
    try:
        ...                                                  # generate; ticket.cancel is the stop flag
    finally:
        ticket.release()

``queue.cancel(key)`` cancels every waiting or running request whose user, tag or own ``key`` equals
``key`` (the own key names one request: the Telegram front stops one answer from its stop button).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator


class QueueFullError(RuntimeError):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"the queue is full, try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class RequestCancelledError(RuntimeError):
    """The request was cancelled (``/stop``) before it got a slot."""


class Ticket:
    def __init__(self, queue: RequestQueue, user: str, tag: str | None, number: int,
                 key: str | None = None) -> None:
        self.queue = queue
        self.user = user
        self.tag = tag
        self.key = key
        self.number = number
        self.started_at: float | None = None
        self.cancel = asyncio.Event()
        self._granted = asyncio.Event()
        self._changed = asyncio.Event()
        self._released = False

    @property
    def granted(self) -> bool:
        return self._granted.is_set()

    @property
    def position(self) -> int:
        """0 while running, 1 when next in line, and so on."""
        return 0 if self.granted else self.queue.position_of(self)

    async def wait_turn(self) -> AsyncIterator[int]:
        """Yield the queue position whenever it changes; return once the slot is granted.

        Raises :class:`RequestCancelledError` when cancelled while waiting. A caller that stops
        waiting (timeout, task cancelled) must still call :meth:`release`.
        """
        last: int | None = None
        while not self.granted:
            if self.cancel.is_set():
                self.release()
                raise RequestCancelledError("cancelled while waiting")
            position = self.queue.position_of(self)
            if position != last:
                last = position
                yield position
            self._changed.clear()
            if self.granted or self.cancel.is_set():
                continue
            changed = asyncio.create_task(self._changed.wait())
            cancelled = asyncio.create_task(self.cancel.wait())
            try:
                await asyncio.wait({changed, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                cancelled.cancel()

    def release(self) -> None:
        """Leave the queue or free the slot; idempotent."""
        if self._released:
            return
        self._released = True
        self.queue._release(self)

    def _notify(self) -> None:
        self._changed.set()


class RequestQueue:
    def __init__(self, max_waiting: int = 32, parallel: int = 1, initial_service_s: float = 15.0) -> None:
        if max_waiting < 1 or parallel < 1:
            raise ValueError("max_waiting and parallel must be at least 1")
        self.max_waiting = max_waiting
        self.parallel = parallel
        self._waiting: OrderedDict[str, deque[Ticket]] = OrderedDict()
        self._running: set[Ticket] = set()
        self._numbers = itertools.count(1)
        # exponential moving average of how long one request holds a slot
        self.avg_service_s = initial_service_s
        self.served = 0

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    @property
    def running(self) -> int:
        return len(self._running)

    def retry_after_s(self) -> int:
        """When a refused request is worth retrying: about one service time per free slot needed."""
        return max(1, math.ceil(self.avg_service_s / self.parallel))

    def estimated_wait_s(self, position: int) -> int:
        return max(0, math.ceil(position * self.avg_service_s / self.parallel))

    def enqueue(self, user: str, tag: str | None = None, key: str | None = None) -> Ticket:
        if self.waiting >= self.max_waiting:
            raise QueueFullError(self.retry_after_s())
        ticket = Ticket(self, user, tag, next(self._numbers), key)
        self._waiting.setdefault(user, deque()).append(ticket)
        self._dispatch()
        self._notify_all()
        return ticket

    def _service_order(self) -> list[Ticket]:
        """Waiting tickets in the order they will be served (round-robin across users)."""
        order: list[Ticket] = []
        queues = list(self._waiting.values())
        depth = max((len(q) for q in queues), default=0)
        for round_index in range(depth):
            order.extend(q[round_index] for q in queues if len(q) > round_index)
        return order

    def position_of(self, ticket: Ticket) -> int:
        if ticket in self._running:
            return 0
        for index, waiting in enumerate(self._service_order(), start=1):
            if waiting is ticket:
                return index
        return 0

    def _dispatch(self) -> None:
        while len(self._running) < self.parallel and self._waiting:
            user, queue = next(iter(self._waiting.items()))
            ticket = queue.popleft()
            # The user goes to the back of the rotation (or leaves it when nothing else is waiting).
            del self._waiting[user]
            if queue:
                self._waiting[user] = queue
            self._running.add(ticket)
            ticket.started_at = time.monotonic()
            ticket._granted.set()
            ticket._notify()

    def _release(self, ticket: Ticket) -> None:
        if ticket in self._running:
            self._running.discard(ticket)
            if ticket.started_at is not None and not ticket.cancel.is_set():
                held = time.monotonic() - ticket.started_at
                self.avg_service_s = 0.7 * self.avg_service_s + 0.3 * held if self.served else held
                self.served += 1
        else:
            queue = self._waiting.get(ticket.user)
            if queue is not None and ticket in queue:
                queue.remove(ticket)
                if not queue:
                    del self._waiting[ticket.user]
        self._dispatch()
        self._notify_all()

    def _notify_all(self) -> None:
        for queue in self._waiting.values():
            for waiting in queue:
                waiting._notify()

    def cancel(self, key: str) -> int:
        """Cancel the waiting and running requests of a user or a tag; returns how many."""
        matched = [t for t in self._running if key in (t.user, t.tag, t.key)]
        matched += [t for q in self._waiting.values() for t in q if key in (t.user, t.tag, t.key)]
        for ticket in matched:
            ticket.cancel.set()
        return len(matched)
