"""One generation: wait for a slot in the LLM queue, stream the model's text, stop when asked.

The events are the shared vocabulary: :class:`rag.answering.events.Queued` while waiting in line, the model's
own :class:`models.base.TextDelta` chunks (raw: citations in context numbering, unverified; nothing of it is
shown before :mod:`rag.verification.sentences` has passed it), and last the :class:`GenerationResult`. Closing
the event stream early (the user pressed stop, the consumer went away) cancels the generation: the model
stops computing and the queue slot is freed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Literal

from models.base import (
    ChatMessage,
    Finished,
    GenerationError,
    GenerationParams,
    LLMBackend,
    LLMUnavailableError,
    TextDelta,
)
from models.queue import RequestCancelledError, RequestQueue, Ticket
from rag.answering.events import Queued
from rag.answering.prompt import build_messages

log = logging.getLogger(__name__)

Failure = Literal["timeout", "cancelled", "error"]


@dataclass
class GenerationResult:
    text: str = ""
    ttft_s: float = 0.0  # from ``started`` to the model's first token
    tokens: int = 0
    failure: Failure | None = None
    error: str | None = None


GenerationEvent = Queued | TextDelta | GenerationResult


async def generate(backend: LLMBackend, queue: RequestQueue, ticket: Ticket, messages: list[ChatMessage],
                   params: GenerationParams, *, started: float, timeout_s: float,
                   ) -> AsyncGenerator[GenerationEvent, None]:
    """The events of one generation, its :class:`GenerationResult` last; closing early cancels it."""
    events: asyncio.Queue[GenerationEvent] = asyncio.Queue()
    producer = asyncio.create_task(_produce(backend, queue, ticket, messages, params, started, timeout_s, events))
    try:
        while True:
            event = await events.get()
            yield event
            if isinstance(event, GenerationResult):
                return
    finally:
        if not producer.done():  # the consumer went away: stop generating
            ticket.cancel.set()
            producer.cancel()
            with contextlib.suppress(BaseException):
                await producer


async def _produce(backend: LLMBackend, queue: RequestQueue, ticket: Ticket, messages: list[ChatMessage],
                   params: GenerationParams, started: float, timeout_s: float,
                   out: asyncio.Queue[GenerationEvent]) -> None:
    result = GenerationResult()
    pieces: list[str] = []
    try:
        async with asyncio.timeout(timeout_s):
            async for position in ticket.wait_turn():
                out.put_nowait(Queued(position, queue.estimated_wait_s(position)))
            stream = backend.stream(messages, params, cancel=ticket.cancel)
            async with contextlib.aclosing(stream) as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, TextDelta):
                        if not result.ttft_s:
                            result.ttft_s = time.monotonic() - started
                        raw = chunk.text if pieces else chunk.text.lstrip()
                        if raw:
                            pieces.append(raw)
                            out.put_nowait(TextDelta(raw))
                    elif isinstance(chunk, Finished):
                        result.tokens = chunk.completion_tokens
                        if chunk.finish_reason == "cancelled":
                            result.failure = "cancelled"
    except RequestCancelledError:
        result.failure = "cancelled"
    except TimeoutError:
        result.failure = "timeout"
    except (GenerationError, LLMUnavailableError) as exc:
        result.failure = "error"
        result.error = str(exc)
        log.warning("generation failed: %s", exc)
    except asyncio.CancelledError:
        result.failure = "cancelled"
        raise
    finally:
        ticket.release()
        if ticket.cancel.is_set() and result.failure is None:
            result.failure = "cancelled"
        result.text = "".join(pieces)
        out.put_nowait(result)


async def warm_up(backend: LLMBackend, queue: RequestQueue) -> None:
    """Evaluate the static part of the prompt once, in the queue's turn (see :meth:`Answerer.warm_up`)."""
    ticket = queue.enqueue("warm-up")
    try:
        async for _ in ticket.wait_turn():
            pass
        prompts = [build_messages("?", [], [], "ru", native_rules=True)] if backend.caches_prompts else []
        prompts.append(build_messages("?", [], [], "ru"))  # the default rules last: the model keeps them
        for messages in prompts:
            stream = backend.stream(messages, GenerationParams(max_tokens=1, temperature=0.0))
            async with contextlib.aclosing(stream) as chunks:
                async for _chunk in chunks:
                    pass
    except (GenerationError, LLMUnavailableError) as exc:
        log.warning("warm-up failed: %s", exc)
    finally:
        ticket.release()
