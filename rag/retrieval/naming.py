"""What a search's names and words say beyond the ranking: whether the question names the first hit's concept
alone, and how far the first hit is ahead by its words (read by :mod:`rag.context`)."""

from __future__ import annotations

from collections.abc import Sequence

from rag.glossary import GlossaryEntry
from rag.retrieval.lexical import Ranked

# A question "is" a name when that name covers at least this share of its content words. On the eval set,
# every question whose only named concept ranked first but was the wrong answer had a coverage under 0.5
# ("шина между видеокартами на 900 ГБ/с" names the GPU entry: 0.49); "what is fine tuning" is 1.0.
NAMED_COVERAGE = 0.6


def compound_parts(entry: GlossaryEntry) -> tuple[str, ...]:
    """The names inside a comparison entry ("GGML и GGUF" → GGML, GGUF): asking about both finds it."""
    if entry.category != "comparisons":
        return ()
    return tuple(part.strip() for part in entry.term.split(" и ") if part.strip())


def names_first(names: Ranked | None, first: GlossaryEntry | None, entries: Sequence[GlossaryEntry]) -> bool:
    """True when the only concept the question names is the first hit's, and the question is about
    that name: it covers most of the question ("what is fine tuning"), or the first hit is a comparison
    named by its sides ("чем GGUF отличается от GGML"; a side asked alone names its own entry, which
    beats the comparison's weaker match of the same words).

    A name inside a longer name is not a second concept ("attention" in "paged attention"), nor is the
    same words matched more weakly (the "fine-tuning" side of "RAG и fine-tuning" in "what is fine
    tuning": an exact headword beats a comparison's side).
    """
    if names is None or not names.spans or first is None:
        return False
    matches = list(zip(names.order, names.scores, names.spans, strict=True))
    named: dict[str, float] = {}
    for position, score, span in matches:
        concept = entries[position].concept
        if any(entries[other].concept != concept and (span < other_span or (span == other_span
                                                                                  and other_score > score))
               for other, other_score, other_span in matches):
            continue
        named[concept] = max(named.get(concept, 0.0), score)
    if set(named) != {first.concept}:
        return False
    return named[first.concept] >= NAMED_COVERAGE or bool(compound_parts(first))

def lexical_runner_up(bm25: Ranked | None, first: GlossaryEntry | None, entries: Sequence[GlossaryEntry]
                  ) -> float | None:
    if bm25 is None or first is None:
        return None
    concept = first.concept
    top = 0.0
    runner_up = 0.0
    for position, score in zip(bm25.order, bm25.scores, strict=True):
        entry = entries[position]
        if entry.id == first.id:
            top = score
        elif entry.concept != concept and not runner_up:
            runner_up = score
    return runner_up / top if top > 0 else None
