"""The extractive floor: the glossary's own sentences, verbatim, when the model's cannot be trusted.

Used for definition questions (the definition is the answer), for comparisons (each side's own definition —
a small model swaps them), and whenever no generated sentence passes verification. Sentences are chosen by
how many of the question's content words they share; an entry's sentences keep their order. The company's
own rules (entries of category ``rental``) are always quoted whole, never cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.context import Comparison
from rag.glossary import GlossaryEntry
from rag.text import content_lemmas, words
from rag.verification.sentences import SENTENCE_END

MAX_SENTENCES = 3  # of one entry, for a question that is not a definition
OTHER_CONCEPTS = 2  # quoted after the first concept when retrieval is unsure
WHOLE_CATEGORIES = frozenset({"rental"})  # the company's rules: quoted whole
_DONT_CONFUSE = re.compile(r"(?i)^\s*не\s+путать\b")


@dataclass(frozen=True)
class Quote:
    """Verbatim text of one entry."""

    entry: GlossaryEntry
    text: str
    original: str | None = None  # set when ``text`` is the curated English rendering of these Russian words


def _sentences(entry: GlossaryEntry) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(entry.definition) if s.strip()]


def quote_entry(entry: GlossaryEntry, question: str | None = None) -> Quote:
    """An entry's definition, or (for a question that is not a definition) its sentences that answer it."""
    sentences = _sentences(entry)
    if question is None or entry.category in WHOLE_CATEGORIES or len(sentences) <= MAX_SENTENCES:
        return Quote(entry, " ".join(sentences))
    asked = set(content_lemmas(question))
    scored = [(len(asked & set(content_lemmas(s))), index) for index, s in enumerate(sentences)]
    best = sorted(scored, key=lambda pair: (-pair[0], pair[1]))[:MAX_SENTENCES]
    if not best or best[0][0] == 0:
        chosen = list(range(min(MAX_SENTENCES, len(sentences))))
    else:
        chosen = sorted(index for score, index in best if score > 0)
    return Quote(entry, " ".join(sentences[i] for i in chosen))


def definition_quotes(entries: Sequence[GlossaryEntry], question: str = "") -> list[Quote]:
    """The first concept's definitions: one per source file (several seeds may define it). Of one file's
    entries, the one with the longest headword the question names comes first: "What is LoRA?" asks for
    «LoRA», not for «LoRA для Stable Diffusion», which has LoRA as an alias."""
    if not entries:
        return []
    concept = entries[0].concept
    asked = f" {' '.join(words(question))} "
    def named(entry: GlossaryEntry) -> int:
        headword = words(entry.term)
        return len(headword) if f" {' '.join(headword)} " in asked else 0

    ordered = sorted((entry for entry in entries if entry.concept == concept), key=lambda entry: -named(entry))
    seen_sources: set[str] = set()
    quotes = []
    for entry in ordered:
        if entry.source not in seen_sources:
            seen_sources.add(entry.source)
            quotes.append(quote_entry(entry))
    return quotes[:2]


def answering_quotes(entries: Sequence[GlossaryEntry], question: str) -> list[Quote]:
    """The sentences of the first concept's entries that share most words with the question, then those of the
    concepts retrieval ranked second and third: a how/why question names one concept and is often answered by
    another (on the labelled set 95.1 % -> 97.3 % answered, on the how/why probe 34 % -> 48 %, none
    contradicted). The entries come from the context, which holds other concepts only when retrieval was
    unsure (:func:`rag.context.focus`); then the third one too is the answer often enough to be shown
    (`bench answers`, quote mode: probe 0.67 -> 0.77, held-out probe 0.69 -> 0.72, faithfulness.yaml
    unchanged at 0.984, none contradicted)."""
    if not entries:
        return []
    concept = entries[0].concept
    quotes = [quote_entry(entry, question) for entry in entries if entry.concept == concept][:2]
    firsts: dict[str, GlossaryEntry] = {}  # each other concept's best-ranked entry, in ranking order
    for entry in entries:
        if entry.concept != concept:
            firsts.setdefault(entry.concept, entry)
    quotes.extend(quote_entry(other, question) for other in list(firsts.values())[:OTHER_CONCEPTS])
    return quotes


def comparison_quotes(comparison: Comparison) -> list[Quote]:
    """Both sides' own definitions, a comparison entry naming both, and 003's «Не путать с…» notes."""
    quotes = [quote_entry(side[0]) for side in (comparison.left, comparison.right) if side]
    for entry in comparison.joint[:1]:
        quotes.append(quote_entry(entry))
    shown = {quote.entry.id for quote in quotes}
    for entry in [*comparison.left, *comparison.right]:
        notes = [s for s in _sentences(entry) if _DONT_CONFUSE.match(s)]
        if notes and entry.id not in shown:
            quotes.append(Quote(entry, " ".join(notes)))
            shown.add(entry.id)
    return quotes
