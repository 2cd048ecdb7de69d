"""The answers being generated in this process, by the id Telegram knows them by, so a stop reaches one.

A private-chat answer streams as a draft; its stop button comes back as ``stopped_message_generation``
with the chat and the ``draft_id``. A group answer has a «Стоп» button whose callback data carries the
same id. Both look the generation up here and cancel it through the answerer with the generation's own
key: the model stops computing and the queue slot is freed, and only this answer stops (not the user's
other questions, unlike /stop).

A stop that arrives before the answer has entered the queue (still retrieving) is remembered and applied
as soon as the next event of that answer comes (:meth:`Generation.apply_stop`).

In-process: with several replicas a stop lands on the replica whose queue holds the generation only if
updates of one chat are routed to one replica.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class Cancellable(Protocol):
    def cancel(self, key: str) -> int: ...


@dataclass
class Generation:
    chat_id: int
    draft_id: int
    user_id: int | None
    stop_requested: bool = False
    on_stop: Callable[[], None] | None = None  # the stream stops its previews
    _reached: bool = False  # the cancel found the request in the queue

    @property
    def key(self) -> str:
        return f"gen:{self.chat_id}:{self.draft_id}"

    def request_stop(self, answerer: Cancellable | None) -> None:
        self.stop_requested = True
        if self.on_stop is not None:
            self.on_stop()
        self.apply_stop(answerer)

    def apply_stop(self, answerer: Cancellable | None) -> None:
        """Cancel once the request is in the queue (a stop may come while the answer is still retrieving)."""
        if self.stop_requested and not self._reached and answerer is not None:
            self._reached = answerer.cancel(self.key) > 0


class Generations:
    def __init__(self) -> None:
        self._running: dict[tuple[int, int], Generation] = {}

    def start(self, chat_id: int, draft_id: int, user_id: int | None) -> Generation:
        generation = Generation(chat_id, draft_id, user_id)
        self._running[(chat_id, draft_id)] = generation
        return generation

    def end(self, generation: Generation) -> None:
        self._running.pop((generation.chat_id, generation.draft_id), None)

    def get(self, chat_id: int, draft_id: int) -> Generation | None:
        return self._running.get((chat_id, draft_id))

    def stop(self, chat_id: int, draft_id: int, answerer: Cancellable | None) -> Generation | None:
        """Stop that answer; None when it is not (or no longer) being generated here."""
        generation = self._running.get((chat_id, draft_id))
        if generation is not None:
            generation.request_stop(answerer)
        return generation

    def __len__(self) -> int:
        return len(self._running)
