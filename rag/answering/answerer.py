"""Answers from the glossary: retrieve, pick the way to answer, generate, verify, or quote.

Async API for the fronts (Telegram bot, console chat, CLI)::

    answerer = await build_answerer(settings, retriever, conversations, backend)   # never raises (rag.answering.build)
    async with contextlib.aclosing(answerer.answer(question, conversation_key(chat_id, thread_id),
                                                   user_key=str(user_id))) as events:
        async for event in events:
            match event:
                case Queued(position, eta_s): ...   # waiting in line; repeated when the position moves
                case Generating(): ...              # the model has started writing (nothing verified yet)
                case Delta(text): ...               # verified text: whole sentences that passed the checks
                case Done(answer): ...              # final, authoritative: app.views.answer renders it
    answerer.cancel(str(user_id))                    # /stop: a user id or a conversation key

This module is the orchestrator; the pieces: :mod:`rag.answering.events` (the events and the
:class:`Answer`), :mod:`rag.context` (which entries, what kind of question), :mod:`rag.answering.generation`
(queue, streaming, cancellation) and :mod:`rag.answering.attempts` (one generation through
:mod:`rag.verification.sentences`: every sentence checked before it is shown), :mod:`rag.answering.extractive`
and :mod:`rag.answering.quoting` (the glossary's own sentences), :mod:`rag.answering.memory` (the conversation
a follow-up leans on). How a question is answered:

* out of scope: refused before the model (``status="out_of_scope"``);
* a definition or a comparison: the glossary's sentences verbatim (``status="extractive"``): the
  definition is the answer, and a small model swaps the sides of a comparison;
* otherwise the model answers from the context; only sentences that pass verification are streamed and
  kept. None passing: one retry with the first concept alone (streamed the same way: nothing was shown
  yet), then the glossary's sentences verbatim with a notice (``status="fallback"``, ``grounded=False``);
  so too when the model fails, times out, the queue is full (``"busy"``) or no model could load
  (``"unavailable"``).

``Done`` always comes last, exactly once. Stopping iteration early (or cancelling the consuming task)
cancels the generation too.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from infra.i18n import Phrase
from models.base import GenerationParams, LLMBackend
from models.queue import QueueFullError, RequestQueue
from rag.answering.attempts import Attempt, outcome, verified_generation
from rag.answering.context_entries import context_entries, search
from rag.answering.conversation import ConversationStore
from rag.answering.events import (
    NO_MODEL,
    RECOVERED,
    Answer,
    AnswerEvent,
    AnswerStatus,
    Delta,
    Done,
    Generating,
    Queued,
    names_missing,
    refusal,
)
from rag.answering.extractive import Quote, comparison_quotes, definition_quotes
from rag.answering.generation import GenerationResult, warm_up
from rag.answering.memory import ConversationMemory, last_user_turn
from rag.answering.prompt import Turn, build_messages
from rag.answering.quoting import VERBATIM, answering, current_renderings, quoted_answer
from rag.context import (
    Retriever,
    elliptical_subject,
    is_definition_question,
    looks_like_follow_up,
    resolve_comparison,
)
from rag.glossary import GlossaryEntry
from rag.language import Lang, detect_lang
from rag.retrieval.retriever import SearchResult
from rag.rules import Caveat
from rag.subject import subject_first
from rag.unknown_names import Vocabulary
from rag.verification.renderings import Rendering
from rag.verification.sentences import SentenceCheck, SentenceVerifier
from rag.verification.stream import SentenceStream

MIN_RETRY_S = 10.0  # a focused retry starts only with at least this much of the request timeout left


class Answerer:
    def __init__(self, retriever: Retriever, backend: LLMBackend | None, *, queue: RequestQueue | None = None,
                 conversations: ConversationStore | None = None, top_k: int = 4, max_tokens: int = 320,
                 temperature: float = 0.2, timeout_s: float = 120.0, unavailable_reason: str | None = None,
                 entries: Sequence[GlossaryEntry] | None = None,
                 caveats: Callable[[Sequence[GlossaryEntry]], tuple[Caveat, ...]] | None = None,
                 renderings: Mapping[str, Rendering] | None = None, generate: bool = True,
                 vocabulary: Vocabulary | None = None) -> None:
        self.retriever, self.vocabulary = retriever, vocabulary  # vocabulary: the names the bot knows
        # False: the model writes nothing; every answer is the glossary's sentences that answer the question
        # (LLM_ANSWER_MODE=quote, the default for the bundled 0.5B model: see LLMSettings.answer_mode)
        self.generate = generate
        self.renderings = dict(renderings or {})  # curated English of the entries (rag.verification.renderings)
        self.caveats = caveats  # the disclaimers of the seeds an answer cites (rag.rules.RuleBook.caveats_for)
        self.backend = backend
        self.queue = queue or RequestQueue(parallel=backend.parallel if backend else 1)
        self.memory = ConversationMemory(conversations)
        self.top_k = top_k
        self.params = GenerationParams(max_tokens=max_tokens, temperature=temperature)
        self.timeout_s = timeout_s
        self.unavailable_reason = unavailable_reason if backend is None else None
        if backend is None and not self.unavailable_reason:
            self.unavailable_reason = "no model configured"
        self._entries = list(entries) if entries is not None else None

    @property
    def entries(self) -> list[GlossaryEntry]:
        """Every entry, for the sides of a comparison (the context holds the best hits only): the
        retriever's current glossary, so a reloaded glossary is seen here too."""
        if self._entries is not None:
            return self._entries
        entries: list[GlossaryEntry] = getattr(self.retriever, "entries", [])
        return entries  # the served snapshot's own list: a reload replaces it, never mutates it

    @property
    def conversations(self) -> ConversationStore | None:
        return self.memory.conversations

    @property
    def model_name(self) -> str:
        return self.backend.model_name if self.backend else NO_MODEL

    def cancel(self, key: str) -> int:
        """Stop the answers of a user or a conversation (waiting or generating); returns how many."""
        return self.queue.cancel(key)

    async def warm_up(self) -> None:
        """Evaluate the static part of the prompt once, so the first real question finds it cached (and,
        with a prompt cache, the Russian rules too)."""
        if self.backend is not None and self.generate:
            await warm_up(self.backend, self.queue)

    async def aclose(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()
        await self.memory.aclose()

    # ------------------------------------------------------------ retrieval

    async def _search(self, query: str) -> SearchResult:
        return await search(self.retriever, query, self.top_k)

    async def retrieve(self, question: str, history: Sequence[Turn], *, topical: bool = False,
                       ) -> list[GlossaryEntry] | None:
        """The context entries, or None when the question is out of scope (see
        :func:`rag.answering.context_entries.context_entries`)."""
        return await context_entries(self.retriever, lambda: self.entries, question, history, top_k=self.top_k,
                                     topical=topical)

    # ------------------------------------------------------------ answering

    async def answer(self, question: str, conversation_key: str | None, *, user_key: str | None = None,
                     lang: Lang | None = None, max_tokens: int | None = None, cancel_key: str | None = None,
                     history: Sequence[Turn] | None = None, topical: bool = False,
                     ) -> AsyncGenerator[AnswerEvent, None]:
        """Stream the events of one answer (see the module docstring).

        ``conversation_key`` (see :func:`rag.answering.conversation.conversation_key`) selects the history used for
        follow-ups; None answers without history. ``user_key`` is the fairness unit in the queue and what
        :meth:`cancel` matches (defaults to the conversation). ``max_tokens`` overrides the answer budget.
        ``cancel_key`` names this one answer for :meth:`cancel` (a stop button under it), unlike the user's
        or the conversation's key, which stop every answer of theirs. The final answer carries the
        disclaimers of the seeds it cites, whichever path produced it. ``history``: the conversation's turns
        when the caller has read them already (the reply pipeline reads them once per message).
        ``topical``: the reply pipeline's router is sure the message asks about a glossary concept; then a
        question that names one by its headword is in scope even when its other words are not the glossary's
        ("why does my loss become NaN with fp16?").
        """
        events = self._answer(question, conversation_key, user_key=user_key, lang=lang, max_tokens=max_tokens,
                              cancel_key=cancel_key, history=history, topical=topical)
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, Done) and self.caveats is not None and event.answer.sources:
                    event = Done(replace(event.answer, caveats=self.caveats(event.answer.sources)))
                yield event

    async def _answer(self, question: str, conversation_key: str | None, *, user_key: str | None,
                      lang: Lang | None, max_tokens: int | None, cancel_key: str | None,
                      history: Sequence[Turn] | None = None, topical: bool = False,
                      ) -> AsyncGenerator[AnswerEvent, None]:
        started = time.monotonic()
        question = question.strip()
        if history is None:
            history = await self.history(conversation_key) if conversation_key else []
        last_user = last_user_turn(history)
        # "а FSDP?" is written in the language of the question it follows, not in FSDP's
        lang = lang or detect_lang(last_user if last_user and elliptical_subject(question) else question)
        entries = await self.retrieve(question, history, topical=topical)
        missing = self.vocabulary.with_glossary(self.entries).unknown_names(question, lang) if self.vocabulary else []
        if entries is None or missing:  # «как экспортировать в onnx…»: no answer is about what the glossary lacks
            yield Done(refusal(lang, names_missing(missing)) if missing else refusal(lang))
            return
        extractive = await self._extractive(question, entries, lang, started, bool(history) and looks_like_follow_up(
            question), [turn.text for turn in reversed(history) if turn.role == "user"])  # the user's, newest first
        if extractive is not None:
            yield Done(await self._remember(conversation_key, question, extractive))
            return
        if not self.generate:  # the model writes nothing here, so a model that did not load changes nothing
            yield Done(await self._remember(conversation_key, question, self._quote_only(question, entries, lang,
                                                                                        started)))
            return
        if self.backend is None:
            notice = Phrase.of("answer_model_unavailable")
            yield Done(await self._remember(conversation_key, question,
                                            self._fallback(question, entries, lang, "unavailable", notice)))
            return
        owner = user_key or conversation_key or "anonymous"
        params = self.params if max_tokens is None else replace(self.params, max_tokens=max(1, max_tokens))
        attempt: Attempt | None = None
        # a Russian question under Russian rules from the first try: under English ones the small model often
        # answers it in English, which no Russian entry supports (both rule sets stay evaluated in the cache)
        async for event in self._attempt(question, entries, history, lang, params, owner, conversation_key,
                                         started, self.timeout_s, native_rules=lang == "ru", cancel_key=cancel_key):
            if isinstance(event, Attempt):
                attempt = event
            elif isinstance(event, QueueFullError):
                notice = Phrase.of("answer_busy", seconds=event.retry_after_s)
                yield Done(self._fallback(question, entries, lang, "busy", notice,
                                          retry_after_s=event.retry_after_s))
                return
            else:
                yield event
        assert attempt is not None
        answer = self._finish(question, attempt, entries, lang)
        focused = [entry for entry in entries if entry.concept == entries[0].concept]
        if answer.status == "fallback" and attempt.result.failure is None and not attempt.stream.answer.text:
            async for retry_event in self._retry_focused(question, focused, history, lang, params, started,
                                                         attempt, owner, conversation_key, cancel_key):
                if isinstance(retry_event, Answer):
                    answer = retry_event
                else:
                    yield retry_event
        answer = replace(answer, first_token_s=attempt.result.ttft_s)
        yield Done(await self._remember(conversation_key, question, answer))

    async def recover(self, question: str, *, lang: Lang | None = None) -> Answer:
        """The answer to a question whose first answer died with its process, without the model.

        Retrieval and the glossary's own sentences only: the user has already waited through a crash (and
        the model may be what crashed), so the recovery is fast and cannot fail the same way. Definitions and
        comparisons are answered as usual; anything else gets the entries' answering sentences under the
        ``answer_recovered`` notice. No history: the conversation may have moved on meanwhile.
        """
        started = time.monotonic()
        question = question.strip()
        lang = lang or detect_lang(question)
        entries = await self.retrieve(question, [])
        if entries is None:
            return refusal(lang)
        extractive = await self._extractive(question, entries, lang, started, follow_up=False)
        if extractive is not None:
            return extractive
        return self._fallback(question, entries, lang, "fallback", RECOVERED)

    async def _extractive(self, question: str, entries: list[GlossaryEntry], lang: Lang, started: float,
                          follow_up: bool, asked: Sequence[str] = ()) -> Answer | None:
        """A comparison or a definition is answered with the glossary's own sentences; so is an elliptical
        follow-up of a definition ("а FSDP?" after "что такое DDP?"). ``asked``: the user's questions before
        this one, newest first (a comparison may point back to them: "а чем она отличается от QLoRA?")."""
        header = [VERBATIM]
        comparison = await asyncio.to_thread(resolve_comparison, self.retriever, self.entries, question, earlier=asked)
        subject = elliptical_subject(question) if asked and is_definition_question(asked[0]) else None
        if comparison is not None:
            quotes = comparison_quotes(comparison)
            if comparison.missing:
                header = [*(Phrase.of("answer_comparison_missing", side=side) for side in comparison.missing),
                          VERBATIM]
        elif is_definition_question(question) and not follow_up:
            named, missing = subject_first(question, entries)  # "what is tensorrt?" is not «Tensor»
            if missing is not None:
                return refusal(lang, Phrase.of("answer_term_missing", term=missing))
            quotes = definition_quotes(named, question)
        elif subject is not None:
            found = await self._search(subject)
            quotes = definition_quotes([hit.entry for hit in found.hits], subject) if found.in_scope else []
        else:
            return None
        if not quotes:
            return None
        return self._quoted(quotes, lang, "extractive", header, grounded=True, elapsed=time.monotonic() - started)

    def _quoted(self, quotes: Sequence[Quote], lang: Lang, status: AnswerStatus, header: Sequence[Phrase], *,
                grounded: bool, elapsed: float = 0.0, notice: Phrase | None = None,
                result: GenerationResult | None = None, retry_after_s: int | None = None,
                rejected: Sequence[SentenceCheck] = ()) -> Answer:
        return quoted_answer(quotes, lang, status, header, grounded=grounded, renderings=self.renderings,
                             model_name=self.model_name, elapsed=elapsed, notice=notice, result=result,
                             retry_after_s=retry_after_s, rejected=rejected)

    async def _attempt(self, question: str, entries: list[GlossaryEntry], history: Sequence[Turn], lang: Lang,
                       params: GenerationParams, owner: str, conversation_key: str | None, started: float,
                       timeout_s: float, *, native_rules: bool = False,
                       cancel_key: str | None = None,
                       ) -> AsyncGenerator[Queued | Generating | Delta | Attempt | QueueFullError, None]:
        """One generation: its verified sentences as Deltas, then the :class:`Attempt`."""
        assert self.backend is not None
        try:
            ticket = self.queue.enqueue(owner, tag=conversation_key, key=cancel_key)
        except QueueFullError as exc:
            yield exc
            return
        messages = build_messages(question, entries, history, lang, native_rules=native_rules)
        # a follow-up ("а сколько VRAM ей нужно?") is about what the turn before named (QLoRA)
        last_user = last_user_turn(history)
        about = last_user if last_user and looks_like_follow_up(question) else None
        verified = SentenceStream(SentenceVerifier(entries, question, lang, glossary=self.entries, about=about,
                                                   renderings=current_renderings(entries, self.renderings)))
        async for event in verified_generation(self.backend, self.queue, ticket, messages, verified, params,
                                               started=started, timeout_s=timeout_s):
            yield event

    async def _retry_focused(self, question: str, focused: list[GlossaryEntry], history: Sequence[Turn],
                             lang: Lang, params: GenerationParams, started: float, first: Attempt,
                             owner: str, conversation_key: str | None, cancel_key: str | None = None,
                             ) -> AsyncGenerator[Queued | Delta | Answer, None]:
        """One more try when no sentence of the model's answer passed: only the best concept in the context,
        and the rules stated in the answer's language.

        With distractors in the context, the default 0.5B model sometimes writes something no entry
        supports; given the one concept retrieval ranked first, it mostly paraphrases that entry. Its
        verified sentences stream like the first attempt's (the first showed none); its :class:`Answer`
        comes last when it answered, else nothing, and the first outcome stands.
        """
        remaining = self.timeout_s - (time.monotonic() - started)
        if remaining < MIN_RETRY_S:
            return
        second: Attempt | None = None
        async for event in self._attempt(question, focused, history, lang, params, owner, conversation_key,
                                         started, remaining, native_rules=True, cancel_key=cancel_key):
            if isinstance(event, Attempt):
                second = event
            elif isinstance(event, QueueFullError):
                return
            elif isinstance(event, Queued | Delta):
                yield event
        if second is None or second.result.failure not in (None, "cancelled"):
            return
        answer = self._finish(question, second, focused, lang)
        if answer.status in ("answered", "cancelled"):
            yield replace(answer, tokens=first.result.tokens + second.result.tokens,
                          rejected=(*first.stream.answer.rejected, *answer.rejected))

    def _finish(self, question: str, attempt: Attempt, entries: list[GlossaryEntry], lang: Lang) -> Answer:
        def fallback(status: AnswerStatus, notice: Phrase, result: GenerationResult,
                     rejected: tuple[SentenceCheck, ...]) -> Answer:
            return self._fallback(question, entries, lang, status, notice, result, rejected=rejected)

        return outcome(attempt, entries, lang, self.model_name, fallback)

    def _quote_only(self, question: str, entries: list[GlossaryEntry], lang: Lang, started: float) -> Answer:
        """The glossary's sentences that answer the question, verbatim: the answer when the model writes none."""
        return self._quoted(answering(entries, question), lang, "extractive", [VERBATIM],
                            grounded=True, elapsed=time.monotonic() - started)

    def _fallback(self, question: str, entries: list[GlossaryEntry], lang: Lang, status: AnswerStatus,
                  notice: Phrase, result: GenerationResult | None = None, retry_after_s: int | None = None,
                  rejected: Sequence[SentenceCheck] = ()) -> Answer:
        """The glossary's sentences that answer the question, verbatim, under a notice."""
        return self._quoted(answering(entries, question), lang, status, [notice], grounded=False, notice=notice,
                            result=result, retry_after_s=retry_after_s, rejected=rejected)

    async def _remember(self, key: str | None, question: str, answer: Answer) -> Answer:
        """Store the turn (a fallback too, so a follow-up can lean on it; a stopped answer not)."""
        if answer.status != "cancelled":
            await self.remember_reply(key, question, answer.said)
        return answer

    async def remember_reply(self, key: str | None, question: str, text: str) -> None:
        """Store a turn the fronts answered without the answerer (a catalog, price or rule reply), so that a
        follow-up ("а какая у неё пропускная способность?" after "сколько памяти у H200?") finds the question
        it follows."""
        await self.memory.remember(key, question, text)

    async def previous_questions(self, key: str | None) -> list[str]:
        """The user's earlier questions in this conversation, the last one first (the intent of a follow-up
        may depend on them)."""
        return await self.memory.previous_questions(key)

    async def history(self, key: str) -> list[Turn]:
        """The conversation's stored turns, oldest first (none when there is no store or it fails)."""
        return await self.memory.history(key)

    async def ask(self, question: str, conversation_key: str | None = None, **kwargs: Any) -> Answer:
        """The whole answer at once (CLI ``--json``, tests, benchmarks)."""
        final: Answer | None = None
        async with contextlib.aclosing(self.answer(question, conversation_key, **kwargs)) as events:
            async for event in events:
                if isinstance(event, Done):
                    final = event.answer
        assert final is not None
        return final
