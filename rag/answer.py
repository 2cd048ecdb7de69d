"""Grounded answers: retrieve, refuse out-of-scope in code, generate with citations, verify them.

Async API for the fronts (Telegram bot, console chat, CLI)::

    answerer = await build_answerer(settings, retriever, engine)   # never raises for a bad model
    async with contextlib.aclosing(answerer.answer(question, conversation_key(chat_id, thread_id),
                                                   user_key=str(user_id))) as events:
        async for event in events:
            match event:
                case Queued(position, eta_s): ...   # waiting in line; repeated when the position moves
                case Delta(text): ...               # provisional streamed text (bad citations removed)
                case Done(answer): ...              # final, authoritative: render answer.text + sources
    answerer.cancel(str(user_id))                    # /stop: a user id or a conversation key

``Done`` always comes last, exactly once. ``Done.answer.text`` may differ from the concatenated deltas:
when the model cites nothing valid, fails, times out or the queue is full, the answer falls back to the
retrieved definitions verbatim with a notice (``grounded=False``). Out-of-scope questions are refused
before the model is touched (``status="out_of_scope"``). When the model file is missing or corrupt, every
answer is retrieval-only (``status="unavailable"``) and nothing crashes. Stopping iteration early (or
cancelling the consuming task) cancels the generation too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from infra.i18n import t
from infra.settings import Settings
from models.base import (
    ChatMessage,
    Finished,
    GenerationError,
    GenerationParams,
    LLMBackend,
    LLMUnavailableError,
    TextDelta,
)
from models.queue import QueueFullError, RequestCancelledError, RequestQueue, Ticket
from rag.conversation import ConversationStore
from rag.glossary import GlossaryEntry
from rag.prompt import (
    CitationStreamFilter,
    Lang,
    Turn,
    build_messages,
    detect_lang,
    ground_citations,
    renumber_citations,
)
from rag.retriever import Hit, SearchResult

log = logging.getLogger(__name__)

AnswerStatus = Literal["answered", "fallback", "out_of_scope", "busy", "timeout", "cancelled", "unavailable"]
NO_MODEL = "none"
FALLBACK_ENTRIES = 3
# On the in-scope eval questions, every one whose runner-up concept scored under 0.6 of the first hit had
# the right entry first: 60 by the fused score (at 0.7 three did not), 75 by the BM25 score (none wrong
# even at 0.7). Together they narrow 102 of the 159 in-scope contexts, none without the right entry.
FOCUS_MARGIN = 0.6
MIN_RETRY_S = 10.0  # a focused retry starts only with at least this much of the request timeout left

# Short questions that lean on the previous turn ("а сколько у неё памяти?", "and its bandwidth?").
_FOLLOW_UP = re.compile(
    r"(?i)(^\s*(а|и|and|what about|how about)\b)|\b(он|она|оно|они|его|её|ее|их|неё|нее|ней|нём|нем|ним|"
    r"него|этот|эта|это|эти|этой|этого|этих|тот|та|те|такой|такая|it|its|they|them|their|this|that|"
    r"these|those)\b"
)


class Retriever(Protocol):
    """What answering needs of :class:`rag.retriever.HybridRetriever`."""

    def search(self, query: str, k: int = ...) -> SearchResult: ...


@dataclass(frozen=True)
class Answer:
    text: str
    grounded: bool
    sources: list[GlossaryEntry]
    model: str
    ttft_s: float
    tokens: int
    status: AnswerStatus
    lang: Lang
    notice: str | None = None
    retry_after_s: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``anchorgpu ask --json`` contract."""
        return {
            "answer": self.text,
            "grounded": self.grounded,
            "sources": [{"id": e.id, "term": e.term, "definition": e.definition, "source": e.source}
                        for e in self.sources],
            "model": self.model,
            "ttft_s": round(self.ttft_s, 3),
            "tokens": self.tokens,
        }


@dataclass(frozen=True)
class Queued:
    position: int
    eta_s: int


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Done:
    answer: Answer


AnswerEvent = Queued | Delta | Done


@dataclass
class _Generation:
    text: str = ""
    ttft_s: float = 0.0
    tokens: int = 0
    cited: list[int] = field(default_factory=list)
    failure: AnswerStatus | None = None  # "timeout" / "cancelled" / "fallback" (model error)
    error: str | None = None


def looks_like_follow_up(question: str) -> bool:
    return len(question.split()) <= 10 and bool(_FOLLOW_UP.search(question))


class Answerer:
    def __init__(self, retriever: Retriever, backend: LLMBackend | None, *, queue: RequestQueue | None = None,
                 conversations: ConversationStore | None = None, top_k: int = 4, max_tokens: int = 320,
                 temperature: float = 0.2, timeout_s: float = 120.0,
                 unavailable_reason: str | None = None) -> None:
        self.retriever = retriever
        self.backend = backend
        self.queue = queue or RequestQueue(parallel=backend.parallel if backend else 1)
        self.conversations = conversations
        self.top_k = top_k
        self.params = GenerationParams(max_tokens=max_tokens, temperature=temperature)
        self.timeout_s = timeout_s
        self.unavailable_reason = unavailable_reason if backend is None else None
        if backend is None and not self.unavailable_reason:
            self.unavailable_reason = "no model configured"

    @property
    def model_name(self) -> str:
        return self.backend.model_name if self.backend else NO_MODEL

    def cancel(self, key: str) -> int:
        """Stop the answers of a user or a conversation (waiting or generating); returns how many."""
        return self.queue.cancel(key)

    async def warm_up(self) -> None:
        """Evaluate the static part of the prompt once, so the first real question finds it cached."""
        if self.backend is None:
            return
        ticket = self.queue.enqueue("warm-up")
        try:
            async for _ in ticket.wait_turn():
                pass
            messages = build_messages("?", [], [], "ru")
            stream = self.backend.stream(messages, GenerationParams(max_tokens=1, temperature=0.0))
            async with contextlib.aclosing(stream) as chunks:
                async for _chunk in chunks:
                    pass
        except (GenerationError, LLMUnavailableError) as exc:
            log.warning("warm-up failed: %s", exc)
        finally:
            ticket.release()

    async def aclose(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()
        if self.conversations is not None:
            await self.conversations.aclose()

    # ------------------------------------------------------------ retrieval

    async def _search(self, query: str) -> SearchResult:
        result: SearchResult = await asyncio.to_thread(self.retriever.search, query, self.top_k)
        return result

    async def retrieve(self, question: str, history: Sequence[Turn]) -> list[GlossaryEntry] | None:
        """The context entries, or None when the question is out of scope.

        A follow-up is searched together with the previous user turn, so "а сколько у неё памяти?"
        after a question about the H100 still finds the H100 entries.
        """
        alone = await self._search(question)
        last_user = next((turn.text for turn in reversed(history) if turn.role == "user"), None)
        if last_user and looks_like_follow_up(question):
            combined = await self._search(f"{question} {last_user}")
            if combined.in_scope:
                hits = _interleave(list(combined.hits), list(alone.hits) if alone.in_scope else [])
            elif alone.in_scope:
                hits = list(alone.hits)
            else:
                return None
        elif alone.in_scope:
            hits = focus(list(alone.hits), alone.lexical_runner_up, named=alone.names_first)
        else:
            return None
        entries = [hit.entry for hit in hits][: self.top_k]
        return entries or None

    # ------------------------------------------------------------ answering

    async def answer(self, question: str, conversation_key: str | None, *, user_key: str | None = None,
                     lang: Lang | None = None, max_tokens: int | None = None,
                     ) -> AsyncGenerator[AnswerEvent, None]:
        """Stream the events of one answer (see the module docstring).

        ``conversation_key`` (see :func:`rag.conversation.conversation_key`) selects the history used for
        follow-ups; None answers without history. ``user_key`` is the fairness unit in the queue and what
        :meth:`cancel` matches (defaults to the conversation). ``max_tokens`` overrides the answer budget.
        """
        started = time.monotonic()
        question = question.strip()
        lang = lang or detect_lang(question)
        history = await self._history(conversation_key) if conversation_key else []
        entries = await self.retrieve(question, history)
        if entries is None:
            yield Done(Answer(text=t("answer_out_of_scope", lang), grounded=False, sources=[],
                              model=NO_MODEL, ttft_s=0.0, tokens=0, status="out_of_scope", lang=lang))
            return
        if self.backend is None:
            notice = t("answer_model_unavailable", lang)
            yield Done(await self._remember(conversation_key, question,
                                            self._fallback(entries, lang, "unavailable", notice)))
            return
        try:
            ticket = self.queue.enqueue(user_key or conversation_key or "anonymous", tag=conversation_key)
        except QueueFullError as exc:
            notice = t("answer_busy", lang, seconds=exc.retry_after_s)
            yield Done(self._fallback(entries, lang, "busy", notice, retry_after_s=exc.retry_after_s))
            return

        messages = build_messages(question, entries, history, lang)
        params = self.params if max_tokens is None else replace(self.params, max_tokens=max(1, max_tokens))
        generation: _Generation | None = None
        async with contextlib.aclosing(self._generation_events(ticket, messages, params, len(entries), started,
                                                               self.timeout_s)) as events:
            async for event in events:
                if isinstance(event, _Generation):
                    generation = event
                else:
                    yield event
        assert generation is not None
        answer = self._finish(generation, entries, lang)
        focused = [entry for entry in entries if entry.concept == entries[0].concept]
        if answer.status == "fallback" and generation.failure is None and (len(focused) < len(entries)
                                                                            or lang == "ru"):
            retried = await self._retry_focused(question, focused, history, lang, params, started, generation,
                                                user_key or conversation_key or "anonymous", conversation_key)
            answer = retried or answer
        yield Done(await self._remember(conversation_key, question, answer))

    async def _generation_events(self, ticket: Ticket, messages: list[ChatMessage], params: GenerationParams,
                                 allowed: int, started: float, timeout_s: float,
                                 ) -> AsyncGenerator[Queued | Delta | _Generation, None]:
        """The events of one generation, its :class:`_Generation` last; closing early cancels it."""
        events: asyncio.Queue[Queued | Delta | _Generation] = asyncio.Queue()
        producer = asyncio.create_task(self._generate(ticket, messages, params, allowed, started, events,
                                                      timeout_s))
        try:
            while True:
                event = await events.get()
                yield event
                if isinstance(event, _Generation):
                    return
        finally:
            if not producer.done():  # the consumer went away: stop generating
                ticket.cancel.set()
                producer.cancel()
                with contextlib.suppress(BaseException):
                    await producer

    async def _retry_focused(self, question: str, focused: list[GlossaryEntry], history: Sequence[Turn],
                             lang: Lang, params: GenerationParams, started: float, first: _Generation,
                             user_key: str, conversation_key: str | None) -> Answer | None:
        """One more try when the model's answer was not grounded: only the best concept in the context,
        and the rules stated in the answer's language.

        With distractors in the context, the default 0.5B model sometimes writes something no entry
        supports, and under English rules it often answers a Russian question in English; given the one
        concept retrieval ranked first and Russian rules, it mostly paraphrases that entry in Russian. The
        retry is not streamed: its final text replaces what was shown. None keeps the first outcome (the
        definitions verbatim).
        """
        remaining = self.timeout_s - (time.monotonic() - started)
        if remaining < MIN_RETRY_S:
            return None
        try:
            ticket = self.queue.enqueue(user_key, tag=conversation_key)
        except QueueFullError:
            return None
        messages = build_messages(question, focused, history, lang, native_rules=True)
        second: _Generation | None = None
        async with contextlib.aclosing(self._generation_events(ticket, messages, params, len(focused), started,
                                                               remaining)) as events:
            async for event in events:
                if isinstance(event, _Generation):
                    second = event
        if second is None or second.failure not in (None, "cancelled"):
            return None
        answer = self._finish(second, focused, lang)
        if answer.status not in ("answered", "cancelled"):
            return None
        return replace(answer, ttft_s=first.ttft_s, tokens=first.tokens + second.tokens)

    async def _remember(self, key: str | None, question: str, answer: Answer) -> Answer:
        """Store the turn (a fallback too, so a follow-up can lean on it; a stopped answer not)."""
        if answer.status != "cancelled" and self.conversations is not None and key:
            try:
                await self.conversations.append(key, question, answer.text)
            except Exception:  # history is a convenience; the answer must still arrive
                log.exception("could not store the conversation turn")
        return answer

    async def _history(self, key: str) -> list[Turn]:
        if self.conversations is None:
            return []
        try:
            return await self.conversations.history(key)
        except Exception:
            log.exception("could not read the conversation history")
            return []

    async def _generate(self, ticket: Ticket, messages: list[ChatMessage], params: GenerationParams,
                        allowed: int, started: float, out: asyncio.Queue[Queued | Delta | _Generation],
                        timeout_s: float) -> None:
        assert self.backend is not None
        result = _Generation()
        pieces: list[str] = []  # the model's text as generated (context numbering)
        filt = CitationStreamFilter(allowed, renumber=True)
        try:
            async with asyncio.timeout(timeout_s):
                async for position in ticket.wait_turn():
                    out.put_nowait(Queued(position, self.queue.estimated_wait_s(position)))
                stream = self.backend.stream(messages, params, cancel=ticket.cancel)
                async with contextlib.aclosing(stream) as chunks:
                    async for chunk in chunks:
                        if isinstance(chunk, TextDelta):
                            if not result.ttft_s:
                                result.ttft_s = time.monotonic() - started
                            raw = chunk.text if pieces else chunk.text.lstrip()
                            if raw:
                                pieces.append(raw)
                            text = filt.feed(raw)
                            if text:
                                out.put_nowait(Delta(text))
                        elif isinstance(chunk, Finished):
                            result.tokens = chunk.completion_tokens
                            if chunk.finish_reason == "cancelled":
                                result.failure = "cancelled"
            tail = filt.flush()
            if tail:
                out.put_nowait(Delta(tail))
        except RequestCancelledError:
            result.failure = "cancelled"
        except TimeoutError:
            result.failure = "timeout"
        except (GenerationError, LLMUnavailableError) as exc:
            result.failure = "fallback"
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

    def _finish(self, gen: _Generation, entries: list[GlossaryEntry], lang: Lang) -> Answer:
        text, cited = ground_citations(gen.text, entries, lang)
        # The sources list holds only the cited entries, so the brackets are renumbered to match it.
        text = renumber_citations(text, cited)
        if gen.failure == "cancelled":
            sources = [entries[n - 1] for n in cited]
            return Answer(text=text or t("answer_cancelled", lang), grounded=False, sources=sources,
                          model=self.model_name, ttft_s=gen.ttft_s, tokens=gen.tokens, status="cancelled",
                          lang=lang, notice=t("answer_cancelled", lang))
        if gen.failure == "timeout":
            return self._fallback(entries, lang, "timeout", t("answer_timeout", lang), gen=gen)
        if gen.failure == "fallback":
            return self._fallback(entries, lang, "fallback", t("answer_model_failed", lang), gen=gen)
        if not cited:
            return self._fallback(entries, lang, "fallback", t("answer_no_citations", lang), gen=gen)
        return Answer(text=text, grounded=True, sources=[entries[n - 1] for n in cited],
                      model=self.model_name, ttft_s=gen.ttft_s, tokens=gen.tokens, status="answered",
                      lang=lang)

    def _fallback(self, entries: list[GlossaryEntry], lang: Lang, status: AnswerStatus, notice: str,
                  gen: _Generation | None = None, retry_after_s: int | None = None) -> Answer:
        """The retrieved definitions verbatim, numbered like the sources, under a notice."""
        shown = entries[:FALLBACK_ENTRIES]
        body = "\n".join(f"[{n}] {e.term} — {e.definition}" for n, e in enumerate(shown, start=1))
        used_model = gen is not None and gen.tokens > 0
        return Answer(text=f"{notice}\n\n{body}", grounded=False, sources=shown,
                      model=self.model_name if used_model else NO_MODEL,
                      ttft_s=gen.ttft_s if gen else 0.0, tokens=gen.tokens if gen else 0, status=status,
                      lang=lang, notice=notice, retry_after_s=retry_after_s)

    async def ask(self, question: str, conversation_key: str | None = None, **kwargs: Any) -> Answer:
        """The whole answer at once (CLI ``--json``, tests, benchmarks)."""
        final: Answer | None = None
        async with contextlib.aclosing(self.answer(question, conversation_key, **kwargs)) as events:
            async for event in events:
                if isinstance(event, Done):
                    final = event.answer
        assert final is not None
        return final


def focus(hits: list[Hit], lexical_runner_up: float | None = None, named: bool = False) -> list[Hit]:
    """The context for a question retrieval is sure about: the first concept's entries alone.

    Sure means the best hit of any other concept scores under ``FOCUS_MARGIN`` of the first, in the fused
    ranking or in BM25's own scores (``lexical_runner_up``: the fused score of a Russian question is often
    BM25's rank alone, which hides how far ahead the first hit is). A small model given distractors next
    to the right entry often copies a distractor (measured with the default 0.5B model: "что такое
    скорость обучения" answered from the batch-size entry); given the one concept (several seed files may
    define it), it paraphrases that. ``named``: the question asks about the first concept by name
    (:attr:`SearchResult.names_first`); "what is fine tuning" was answered from the "RAG и fine-tuning"
    comparison entry when both were in the context. When retrieval is unsure, the model sees every hit and
    the citations show which one it used.
    """
    if not hits:
        return hits
    concept = hits[0].entry.concept
    others = [hit for hit in hits if hit.entry.concept != concept]
    lexically_sure = lexical_runner_up is not None and lexical_runner_up < FOCUS_MARGIN
    if others and others[0].score >= FOCUS_MARGIN * hits[0].score and not lexically_sure and not named:
        return hits
    return [hit for hit in hits if hit.entry.concept == concept]


def _interleave(first: list[Hit], second: list[Hit]) -> list[Hit]:
    """Hits of both searches, alternating and best-ranked first, without duplicate entries."""
    seen: set[str] = set()
    merged = []
    for pair in itertools.zip_longest(first, second):
        for hit in pair:
            if hit is not None and hit.entry.id not in seen:
                seen.add(hit.entry.id)
                merged.append(hit)
    return merged


async def build_answerer(settings: Settings, retriever: Retriever, conversations: ConversationStore | None,
                         backend: LLMBackend) -> Answerer:
    """The answerer over ``backend`` (loaded here); a model that cannot load gives retrieval-only answers."""
    reason: str | None = None
    try:
        await backend.load()
    except LLMUnavailableError as exc:
        reason = str(exc)
        log.warning("LLM unavailable, answering from retrieval only: %s", reason)
        await backend.aclose()
        backend_or_none: LLMBackend | None = None
    else:
        backend_or_none = backend
    queue = RequestQueue(max_waiting=settings.llm.queue_size, parallel=backend.parallel)
    return Answerer(retriever, backend_or_none, queue=queue, conversations=conversations,
                    top_k=settings.rag.top_k, max_tokens=settings.llm.max_tokens,
                    temperature=settings.llm.temperature, timeout_s=settings.llm.request_timeout_s,
                    unavailable_reason=reason)
