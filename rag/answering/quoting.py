"""Answers made of the glossary's own sentences: the extractive answer and every fallback.

:mod:`rag.answering.extractive` picks the sentences; here they become an :class:`Answer` under their header
(phrases the fronts render, :func:`app.views.answer.answer_text`) and, for an English question, are replaced
by the entry's curated English when it was made from this very text (:mod:`rag.verification.renderings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infra.i18n import Phrase
from rag.answering.events import NO_MODEL, Answer, AnswerStatus
from rag.answering.extractive import Quote, answering_quotes
from rag.answering.generation import GenerationResult
from rag.glossary import GlossaryEntry
from rag.language import Lang
from rag.verification.renderings import Rendering, rendered_sentences, source_sha
from rag.verification.sentences import SentenceCheck


def answering(entries: list[GlossaryEntry], question: str) -> list[Quote]:
    """The glossary's sentences that answer the question (the first entry whole when none does)."""
    return answering_quotes(entries, question) or [Quote(entries[0], entries[0].definition)]


def current_renderings(entries: Sequence[GlossaryEntry], renderings: Mapping[str, Rendering]) -> dict[str, str]:
    """The English renderings made from these entries' current text: what an English sentence restates."""
    return {entry.id: rendering.en for entry in entries
            if (rendering := renderings.get(entry.id)) is not None
            and rendering.source_sha == source_sha(entry.definition)}


def translated(quote: Quote, renderings: Mapping[str, Rendering]) -> Quote:
    """The entry's curated English for the quoted sentences (the whole definition or some of them) when
    the rendering was made from this very text (a changed entry falls back to the Russian until its
    rendering is reviewed)."""
    rendering = renderings.get(quote.entry.id)
    definition = quote.entry.definition
    if rendering is None or rendering.source_sha != source_sha(definition):
        return quote
    if " ".join(quote.text.split()) == " ".join(definition.split()):
        return Quote(quote.entry, rendering.en, original=quote.text)
    # a few sentences of a long entry: the rendering is sentence by sentence (rag.verification.renderings.check)
    english = rendered_sentences(quote.text, definition, rendering.en)
    return quote if english is None else Quote(quote.entry, english, original=quote.text)


VERBATIM = Phrase.of("answer_verbatim")
TRANSLATED = Phrase.of("answer_translated")


def quoted_answer(quotes: Sequence[Quote], lang: Lang, status: AnswerStatus, header: Sequence[Phrase], *,
                  grounded: bool, renderings: Mapping[str, Rendering], model_name: str, elapsed: float = 0.0,
                  notice: Phrase | None = None, result: GenerationResult | None = None,
                  retry_after_s: int | None = None, rejected: Sequence[SentenceCheck] = ()) -> Answer:
    """The answer made of these quotes (translated for an English question when a rendering allows)."""
    if lang == "en" and renderings:
        english = [translated(quote, renderings) for quote in quotes]
        if any(quote.original is not None for quote in english):
            header = [TRANSLATED if phrase == VERBATIM else phrase for phrase in header]
        quotes = english
    sources = list(dict.fromkeys(quote.entry for quote in quotes))
    used_model = result is not None and result.tokens > 0
    return Answer(generated="", grounded=grounded, sources=sources,
                  model=model_name if used_model else NO_MODEL,
                  ttft_s=elapsed if result is None else result.ttft_s,
                  tokens=result.tokens if result else 0, status=status, lang=lang, notice=notice,
                  retry_after_s=retry_after_s, quotes=tuple(quotes), header=tuple(header),
                  rejected=tuple(rejected))
