"""Free-text questions for the text fronts (console chat, ``anchorgpu ask``), decided by the one intent
classifier: a price question from the price list, a fit question by the fit engine, anything else by the
answerer — the same decisions the Telegram bot makes for the same text.
"""

from __future__ import annotations

import contextlib
from typing import Any, TextIO

from app.intents import Intent
from app.services import Services
from app.views.answer import render_caveats
from app.views.catalog import CATALOG_INTENTS, render_rule_answer, render_spec_answer
from app.views.fit import render
from app.views.prices import render_price_answer
from gpu.fit.request import FitInputError
from infra.i18n import Lang, t
from rag.answer import Answer, Answerer, Delta, Done, Queued
from rag.prompt import detect_lang


def render_sources(answer: Answer) -> str:
    if not answer.sources:
        return ""
    lines = [f"[{n}] {e.term} — {e.source} ({e.id})" for n, e in enumerate(answer.sources, start=1)]
    return f"\n{t('sources_title', answer.lang)}:\n" + "\n".join(lines)


async def stream_answer(answerer: Answerer, question: str, conversation: str | None, lang: Lang | None,
                        out: TextIO | None) -> Answer:
    """Print deltas as they arrive; when the final text differs (a fallback), print it after them."""
    streamed: list[str] = []
    final: Answer | None = None
    events = answerer.answer(question, conversation, lang=lang)
    async with contextlib.aclosing(events) as stream:
        async for event in stream:
            if out is None:
                if isinstance(event, Done):
                    final = event.answer
                continue
            if isinstance(event, Queued):
                out.write(f"[queue: #{event.position}, ~{event.eta_s} s]\n")
            elif isinstance(event, Delta):
                streamed.append(event.text)
                out.write(event.text)
            elif isinstance(event, Done):
                final = event.answer
            out.flush()
    assert final is not None
    if out is not None:
        if "".join(final.text.split()) != "".join("".join(streamed).split()):
            # a fallback, or citations the check corrected: the final text is the one that counts
            out.write(("\n\n" if streamed else "") + final.text)
        out.write("\n" + render_sources(final) + "\n")
        if final.caveats:
            out.write("\n" + render_caveats(final.caveats, final.lang) + "\n")
        out.flush()
    return final


def _catalog_reply(text: str, source_id: str, source: str, lang: Lang) -> dict[str, Any]:
    """The ``ask --json`` document of an answer that did not come from the model."""
    return {"answer": text, "grounded": True,
            "sources": [{"id": source_id, "term": t(f"source_{source_id}", lang), "definition": "",
                         "source": source}],
            "model": "none", "ttft_s": 0.0, "tokens": 0, "caveats": []}


async def reply_to_question(services: Services, question: str, *, lang: Lang | None,
                            conversation: str | None, out: TextIO | None) -> dict[str, Any]:
    """Answer one question; print the reply to ``out`` (streamed) when given; return the JSON document."""
    previous = await services.answerer.previous_questions(conversation) if services.answerer is not None else []
    intent = services.intents.classify_question(question, previous)
    reply_lang: Lang = lang or detect_lang(question)
    document: dict[str, Any] = {}
    if intent.kind == "rule":
        text = render_rule_answer(intent, reply_lang)
        entries = list(dict.fromkeys(answer.entry for answer in intent.rules))
        caveats = dict.fromkeys(caveat for answer in intent.rules for caveat in answer.caveats)
        document = {"answer": text, "grounded": True,
                    "sources": [{"id": e.id, "term": e.term, "definition": e.definition, "source": e.source}
                                for e in entries],
                    "model": "none", "ttft_s": 0.0, "tokens": 0,
                    "caveats": [{"source": c.source, "text": c.quote} for c in caveats]}
    elif intent.kind == "gpu_spec":
        text = render_spec_answer(intent, services.data, reply_lang)
        document = _catalog_reply(text, "gpu_catalog", "data/gpus.yaml", reply_lang)
    elif intent.kind == "price":
        text = render_price_answer(intent, services.data, reply_lang)
        document = _catalog_reply(text, "price_list", "data/prices.yaml", reply_lang)
    elif intent.kind == "fit":
        try:
            result = services.fit.fit(question)
        except FitInputError:  # the classifier saw it parse; a catalog edited meanwhile may disagree
            intent = Intent("glossary", question)
        else:
            text = render(result, reply_lang, currency=services.fit.currency)
            document = _catalog_reply(text, "fit_engine", "data/models.yaml, data/gpus.yaml", reply_lang)
    if intent.kind == "glossary":
        answerer = await services.ensure_answerer()
        answer = await stream_answer(answerer, question, conversation, lang, out)
        return answer.to_json()
    if services.answerer is not None and intent.kind in CATALOG_INTENTS:
        # a follow-up ("а у неё?") takes its subject from this question; a fit reply is not one to follow
        await services.answerer.remember_reply(conversation, question, document["answer"])
    if out is not None:
        out.write(document["answer"] + "\n")
        out.flush()
    return document
