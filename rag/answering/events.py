"""The events of one answer, and the answer itself (data: its text and JSON form are views in
:mod:`app.views.answer`): the one vocabulary the fronts read.

An answer streams :class:`Queued` (waiting in the LLM queue), :class:`Generating` (the model has started
writing), :class:`Delta` (verified text) and, last and exactly once, :class:`Done` with the :class:`Answer`.
A generation (:mod:`rag.answering.generation`) reports its place in the queue with the same :class:`Queued`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from infra.i18n import Phrase
from rag.answering.extractive import Quote
from rag.glossary import GlossaryEntry
from rag.language import Lang
from rag.rules import Caveat
from rag.verification.sentences import SentenceCheck

AnswerStatus = Literal["answered", "extractive", "fallback", "out_of_scope", "busy", "timeout", "cancelled",
                       "unavailable"]
NO_MODEL = "none"


@dataclass(frozen=True)
class Answer:
    """What the answerer says, as data: the model's verified sentences or the glossary's quotes, the phrases
    around them (rendered by the fronts, :func:`app.views.answer.answer_text`) and where they come from."""

    generated: str  # the model's verified sentences as shown ("" when the answer is quotes, or nothing)
    grounded: bool  # every sentence is verified model text or the glossary's own words
    sources: list[GlossaryEntry]
    model: str
    ttft_s: float  # to the first verified sentence (or to the answer, when nothing was generated)
    tokens: int
    status: AnswerStatus
    lang: Lang
    notice: Phrase | None = None  # why the answer is not the model's (a fallback), or that it was stopped
    retry_after_s: int | None = None
    quotes: tuple[Quote, ...] = ()  # the glossary's words shown verbatim, numbered like the sources
    header: tuple[Phrase, ...] = ()  # the lines above the quotes (a missing comparison side, "verbatim")
    rejected: tuple[SentenceCheck, ...] = field(default=(), compare=False)  # generated, never shown
    caveats: tuple[Caveat, ...] = ()  # the cited seeds' own disclaimers, shown verbatim after the answer
    # to the model's first token: what an unverified stream would have shown first (0: no model ran)
    first_token_s: float = field(default=0.0, compare=False)

    @property
    def said(self) -> str:
        """What was said, without the phrases around it: the conversation memory's assistant turn."""
        if self.quotes:
            numbers = {entry.id: n for n, entry in enumerate(self.sources, start=1)}
            return "\n".join(f"{quote.entry.term} — «{quote.text}» [{numbers[quote.entry.id]}]"
                             for quote in self.quotes)
        return self.generated


OUT_OF_SCOPE = Phrase.of("answer_out_of_scope")
RECOVERED = Phrase.of("answer_recovered")  # the notice of an answer recovered after its process died


def names_missing(names: Sequence[str]) -> Phrase:
    """The refusal of a question about names the glossary lacks (:mod:`rag.unknown_names`)."""
    return Phrase.of("answer_names_missing", names=", ".join(f"«{name}»" for name in names))


def refusal(lang: Lang, reason: Phrase = OUT_OF_SCOPE) -> Answer:
    """No answer: the question is not one the glossary covers (``reason`` says so to the user)."""
    return Answer(generated="", grounded=False, sources=[], model=NO_MODEL, ttft_s=0.0, tokens=0,
                  status="out_of_scope", lang=lang, notice=reason)


@dataclass(frozen=True)
class Queued:
    position: int
    eta_s: int


@dataclass(frozen=True)
class Generating:
    """The model has started writing: its sentences are shown once they pass verification."""


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Done:
    answer: Answer


AnswerEvent = Queued | Generating | Delta | Done
