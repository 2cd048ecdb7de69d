"""Glossary answers and entry cards as the user sees them: Telegram HTML or plain text, ru or en."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from infra.i18n import Lang, has, t
from infra.markup import PLAIN, Markup
from rag.answering.events import Answer
from rag.glossary import GlossaryEntry
from rag.rules import Caveat


def _header(answer: Answer) -> list[str]:
    """The phrases above the quotes, rendered (the notice of a fallback, "verbatim", a missing side)."""
    return [phrase.render(answer.lang) for phrase in answer.header]


def answer_text(answer: Answer) -> str:
    """An answer as plain text: the quotes under their header, or the model's verified sentences (after a
    stopped answer's sentences, nothing else), or the notice when nothing was said (a refusal, a stop)."""
    if answer.quotes:
        numbers = {entry.id: n for n, entry in enumerate(answer.sources, start=1)}
        lines = _header(answer)
        for quote in answer.quotes:
            if quote.original is not None:  # a curated translation: said to be one, never the glossary's words
                lines.append(f"{quote.entry.term} — “{quote.text}” [{numbers[quote.entry.id]}] "
                             f"({t('answer_translation_mark', answer.lang)})\n"
                             f"  {t('answer_original', answer.lang)} «{quote.original}»")
            else:
                lines.append(f"{quote.entry.term} — «{quote.text}» [{numbers[quote.entry.id]}]")
        return "\n".join(lines)
    if answer.generated or answer.notice is None:
        return answer.generated
    return answer.notice.render(answer.lang)


def answer_json(answer: Answer) -> dict[str, Any]:
    """A glossary answer in the ``anchorgpu ask --json`` contract (sources by their file name, for operators)."""
    return {
        "answer": answer_text(answer),
        "grounded": answer.grounded,
        "sources": [{"id": e.id, "term": e.term, "definition": e.definition, "source": e.source}
                    for e in answer.sources],
        "model": answer.model,
        "ttft_s": round(answer.ttft_s, 3),
        "tokens": answer.tokens,
        "caveats": [{"source": c.source, "text": c.quote} for c in answer.caveats],
        **({"original": [{"id": q.entry.id, "text": q.original} for q in answer.quotes if q.original]}
           if any(q.original for q in answer.quotes) else {}),
    }


def source_title(source: str, lang: Lang) -> str:
    """The document an entry comes from, as a reader names it: its seed's title (``source_title_<seed>`` in the
    catalog), or the glossary's for a seed without one. The seed's file name is for ``--json`` and operators."""
    key = f"source_title_{PurePath(source).stem}"
    return t(key, lang) if has(key) else t("source_title_glossary", lang)


def _source(source: str, lang: Lang, markup: Markup) -> str:
    """An entry's source as shown: a web page as its link, a seed file as its title (never the file name)."""
    if source.startswith(("http://", "https://")):
        return markup.link(source, source)
    return markup.text(source_title(source, lang))


def render_sources(sources: Sequence[GlossaryEntry], lang: Lang, markup: Markup = PLAIN) -> str:
    """``Sources:`` and one numbered line per cited entry: its term and its document's title (plain text names
    the entry id too)."""
    if not sources:
        return ""
    lines = [markup.bold(t("sources_title", lang) + ("" if markup.html else ":"))]
    for number, entry in enumerate(sources, start=1):
        line = f"[{number}] {markup.bold(entry.term or entry.id)}"
        if entry.source:
            line += " — " + _source(entry.source, lang, markup)
        if not markup.html:
            line += f" ({entry.id})"
        lines.append(line)
    return "\n".join(lines)


def render_answer(text: str, sources: Sequence[GlossaryEntry], lang: Lang, markup: Markup = PLAIN,
                  notice: str | None = None) -> str:
    """The final answer: an optional notice, the text verbatim (escaped for HTML), then the sources."""
    parts = []
    if notice:
        parts.append(markup.italic(notice))
    parts.append(markup.text(text.strip()) or markup.text(t("answer_empty", lang)))
    rendered_sources = render_sources(sources, lang, markup)
    if rendered_sources:
        parts.append(rendered_sources)
    return "\n\n".join(parts)


def render_card(entry: GlossaryEntry, lang: Lang, markup: Markup = PLAIN) -> str:
    """One glossary entry as a card: term, definition, source (inline mode and /terms)."""
    lines = [markup.bold(entry.term), markup.text(entry.definition.strip())]
    if entry.source:
        lines.append(f"{markup.text(t('source_label', lang))}: {_source(entry.source, lang, markup)}")
    return "\n\n".join(lines)


def render_caveats(caveats: Sequence[Caveat], lang: Lang, markup: Markup = PLAIN) -> str:
    """The cited seeds' own disclaimers, quoted (in English, the curator's rendering follows the quote)."""
    parts = []
    for caveat in caveats:
        parts.append(markup.italic(t("answer_caveat", lang, source=source_title(caveat.source, lang))))
        parts.append(markup.quote(caveat.quote))
        if lang == "en":
            parts.append(markup.text(t("rule_in_english", lang, text=caveat.en)))
    return "\n".join(parts)


def render_reply(answer: Answer, markup: Markup = PLAIN) -> str:
    """A final answer; the glossary's own words (quotes) set apart, so the user sees they are verbatim."""
    body = _render_body(answer, markup)
    caveats = render_caveats(answer.caveats, answer.lang, markup)
    return f"{body}\n\n{caveats}" if caveats else body


def _render_body(answer: Answer, markup: Markup) -> str:
    if not answer.quotes:
        return render_answer(answer_text(answer), answer.sources, answer.lang, markup)
    numbers = {entry.id: n for n, entry in enumerate(answer.sources, start=1)}
    parts = [markup.italic("\n".join(_header(answer)) or t("answer_verbatim", answer.lang))]
    for quote in answer.quotes:
        if quote.original is not None:  # our translation, the glossary's own words one tap away
            parts.append(f"{markup.bold(quote.entry.term)} [{numbers[quote.entry.id]}] "
                         f"{markup.italic('(' + t('answer_translation_mark', answer.lang) + ')')}\n"
                         f"{markup.quote(quote.text)}\n"
                         f"{markup.details(t('answer_original', answer.lang), quote.original)}")
            continue
        parts.append(f"{markup.bold(quote.entry.term)} [{numbers[quote.entry.id]}]\n{markup.quote(quote.text)}")
    sources = render_sources(answer.sources, answer.lang, markup)
    if sources:
        parts.append(sources)
    return "\n\n".join(parts)
