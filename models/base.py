"""The one async streaming interface every LLM backend implements.

A backend turns a list of chat messages into a stream of :class:`TextDelta` chunks followed by exactly
one :class:`Finished` (token usage, finish reason). Cancellation is cooperative and works two ways: set
the ``cancel`` event passed to :meth:`LLMBackend.stream`, or stop iterating (``aclose()`` on the
generator, or cancelling the task that iterates) — both stop the generation at the next token.

Backends never run two generations at once on their own; :class:`models.queue.RequestQueue` decides
who runs when.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 256
    temperature: float = 0.2
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class Finished:
    prompt_tokens: int
    completion_tokens: int
    # "stop" (end of answer), "length" (token budget), "cancelled"
    finish_reason: str


StreamChunk = TextDelta | Finished


class LLMUnavailableError(RuntimeError):
    """The model cannot serve requests (missing or corrupt file, failed load, server unreachable)."""


class GenerationError(RuntimeError):
    """One generation failed midway; the backend itself may still be usable."""


@runtime_checkable
class LLMBackend(Protocol):
    @property
    def model_name(self) -> str: ...

    @property
    def parallel(self) -> int:
        """How many generations the backend can serve at once (1 for one in-process context)."""
        ...

    @property
    def caches_prompts(self) -> bool:
        """Whether evaluated prompts stay cached beyond the latest one (then warming up each system prompt
        pays off)."""
        ...

    async def load(self) -> None:
        """Prepare the backend; raises :class:`LLMUnavailableError` with a one-line reason."""
        ...

    def stream(self, messages: list[ChatMessage], params: GenerationParams,
               cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]: ...

    def count_tokens(self, text: str) -> int: ...

    async def aclose(self) -> None: ...


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 3.5 characters a token for mixed Russian/English text)."""
    return max(1, round(len(text) / 3.5)) if text else 0
