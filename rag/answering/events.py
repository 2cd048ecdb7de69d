"""The events of one answer, and the answer itself (data: its JSON form is a view, app.views.answer.answer_json):
the one vocabulary the fronts read.

An answer streams :class:`Queued` (waiting in the LLM queue), :class:`Generating` (the model has started
writing), :class:`Delta` (verified text) and, last and exactly once, :class:`Done` with the :class:`Answer`.
A generation (:mod:`rag.answering.generation`) reports its place in the queue with the same :class:`Queued`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
    text: str
    grounded: bool  # every sentence is verified model text or the glossary's own words
    sources: list[GlossaryEntry]
    model: str
    ttft_s: float  # to the first verified sentence (or to the answer, when nothing was generated)
    tokens: int
    status: AnswerStatus
    lang: Lang
    notice: str | None = None
    retry_after_s: int | None = None
    quotes: tuple[Quote, ...] = ()  # the glossary's words shown verbatim, numbered like the sources
    rejected: tuple[SentenceCheck, ...] = field(default=(), compare=False)  # generated, never shown
    caveats: tuple[Caveat, ...] = ()  # the cited seeds' own disclaimers, shown verbatim after the answer
    # to the model's first token: what an unverified stream would have shown first (0: no model ran)
    first_token_s: float = field(default=0.0, compare=False)


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
