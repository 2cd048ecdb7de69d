"""One generation, verified sentence by sentence: what the model writes reaches the user only through
:class:`rag.verification.stream.SentenceStream`.

The answerer (:mod:`rag.answering.answerer`) decides when to generate and with which context; this streams
one generation's events (:mod:`rag.answering.events`) and ends with its :class:`Attempt`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from infra.i18n import Phrase
from models.base import ChatMessage, GenerationParams, LLMBackend, TextDelta
from models.queue import RequestQueue, Ticket
from rag.answering.events import Answer, AnswerStatus, Delta, Generating, Queued
from rag.answering.generation import GenerationResult, generate
from rag.glossary import GlossaryEntry
from rag.language import Lang
from rag.verification.sentences import SentenceCheck
from rag.verification.stream import SentenceStream

# the glossary's words under a notice, when the model's answer cannot stand (status, notice, result, rejected)
Fallback = Callable[[AnswerStatus, Phrase, GenerationResult, tuple[SentenceCheck, ...]], Answer]


@dataclass
class Attempt:
    """One generation, verified sentence by sentence."""

    result: GenerationResult
    stream: SentenceStream
    first_shown_s: float = 0.0
    stopped_stalled: bool = False  # stopped by the answerer: its first claim failed (SentenceStream.stalled)


async def verified_generation(backend: LLMBackend, queue: RequestQueue, ticket: Ticket,
                              messages: list[ChatMessage], verified: SentenceStream, params: GenerationParams,
                              *, started: float, timeout_s: float,
                              ) -> AsyncGenerator[Queued | Generating | Delta | Attempt, None]:
    """The generation's verified sentences as Deltas, then the :class:`Attempt`. A generation whose first claim
    failed before any sentence passed (:attr:`SentenceStream.stalled`) is stopped there: the answerer's next
    step (a focused retry, else the glossary's words) comes without waiting for the rest of it."""
    attempt = Attempt(GenerationResult(), verified)
    events = generate(backend, queue, ticket, messages, params, started=started, timeout_s=timeout_s)
    written: list[str] = []
    first_token_s = 0.0
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, Queued):
                yield event
            elif isinstance(event, TextDelta):
                if not verified.started:
                    verified.started = True
                    first_token_s = time.monotonic() - started
                    yield Generating()
                written.append(event.text)
                shown = verified.feed(event.text)
                if shown:
                    attempt.first_shown_s = attempt.first_shown_s or time.monotonic() - started
                    yield Delta(shown)
                elif verified.stalled:
                    # closing the events (leaving this block) cancels the generation and frees the queue slot
                    attempt.stopped_stalled = True
                    attempt.result = GenerationResult(text="".join(written), ttft_s=first_token_s,
                                                      tokens=len(written))
                    break
            else:
                attempt.result = event
    if attempt.stopped_stalled:
        yield attempt
        return
    if attempt.result.failure is None:
        tail = verified.flush()
        if tail:
            attempt.first_shown_s = attempt.first_shown_s or time.monotonic() - started
            yield Delta(tail)
    yield attempt


def outcome(attempt: Attempt, entries: list[GlossaryEntry], lang: Lang, model_name: str,
            fallback: Fallback) -> Answer:
    """The answer one attempt gives: its verified sentences, or a stopped answer, or the fallback."""
    verified, result = attempt.stream.answer, attempt.result
    sources = [entries[n - 1] for n in verified.cited]
    rejected = tuple(verified.rejected)
    ttft = attempt.first_shown_s or result.ttft_s
    if result.failure == "cancelled":
        return Answer(generated=verified.text, grounded=False, sources=sources, model=model_name, ttft_s=ttft,
                      tokens=result.tokens, status="cancelled", lang=lang, notice=Phrase.of("answer_cancelled"),
                      rejected=rejected)
    if result.failure == "timeout":
        return fallback("timeout", Phrase.of("answer_timeout"), result, rejected)
    if result.failure == "error":
        return fallback("fallback", Phrase.of("answer_model_failed"), result, rejected)
    if not verified.text:
        return fallback("fallback", Phrase.of("answer_no_citations"), result, rejected)
    return Answer(generated=verified.text, grounded=True, sources=sources, model=model_name, ttft_s=ttft,
                  tokens=result.tokens, status="answered", lang=lang, rejected=rejected)
