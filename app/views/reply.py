"""Every reply of the pipeline as text (plain or Telegram HTML) and as the ``anchorgpu ask --json`` document.

A glossary answer is not here: it streams, and :mod:`app.views.answer` renders it. Telegram draws fits,
quotes and comparisons as rich tables (their :class:`app.views.table.Report`) and clarifications with
buttons; this module is what every front falls back to and what the console and the CLI print.
"""

from __future__ import annotations

from typing import Any

from app.intents import CATALOG_FILES, CatalogSource
from app.lifecycle import render_lifecycle
from app.reply import (
    CatalogReply,
    ClarifyReply,
    CompareReply,
    FitReply,
    GlossaryReply,
    LifecycleReply,
    QuoteReply,
    RefusalReply,
    Reply,
    SmallTalkReply,
)
from app.smalltalk import render_smalltalk
from app.views.catalog import render_catalog_answer
from app.views.compare import comparison_json, render_comparison
from app.views.fit import render as render_fit
from app.views.fit import render_error as render_fit_error
from app.views.fit import result_json
from app.views.quote import money, pricing_label, render_input_error, render_quote
from gpu.data import GpuData
from gpu.fit.engine import GIB
from gpu.fit.quant import WEIGHT_FORMATS
from gpu.quote.request import QuoteRequest
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def quote_command(reply: QuoteReply) -> str:
    """The /quote arguments that issue this quote with an id (what the free-text reply suggests)."""
    assert reply.request is not None
    return request_command(reply.request)


def request_command(request: QuoteRequest) -> str:
    text = f"{request.gpu_id} x{request.gpu_count} {request.duration.describe('en')}"
    return text if request.pricing.value == "on-demand" else f"{text} {request.pricing.value}"


def render_quote_options(reply: QuoteReply, markup: Markup = PLAIN) -> str:
    """Several configurations priced the same way for the same time, the cheapest first and marked with what it
    saves; each with its cheapest way to pay when another way costs less, and the /quote that saves it."""
    lang = reply.lang
    # the cheapest first; options chosen for a budget keep their order (the most memory first)
    ranked = list(reply.options) if reply.budget is not None else \
        sorted(reply.options, key=lambda option: (option[1].total, reply.options.index(option)))
    cheapest = ranked[0][1]
    first = reply.options[0][1]
    lines = [markup.bold(t("quote_options_compared_title", lang, duration=first.duration.describe(lang),
                           pricing=pricing_label(first.pricing, lang)))]
    if reply.budget is not None:  # the most of each GPU the budget buys
        lines.append(markup.text(t("quote_options_chosen_budget", lang, shown=len(ranked),
                                   budget=money(reply.budget, first.currency, lang))))
    elif reply.chosen and reply.fitted_model:  # the fit chose them for the model named
        lines.append(markup.text(t("quote_options_chosen_fit", lang, model=reply.fitted_model, shown=len(ranked))))
    elif reply.chosen:  # not named by the customer: say which ones these are
        chosen = "quote_options_chosen_total_memory" if reply.memory_in_total else "quote_options_chosen_memory"
        lines.append(markup.text(t(chosen, lang, gb=reply.min_memory_gb, shown=len(ranked))
                                 if reply.min_memory_gb else t("quote_options_chosen_cheapest", lang,
                                                               shown=len(ranked))))
    for request, quote in ranked:
        line = t("quote_options_compared_line", lang, count=quote.gpu_count, gpu=quote.gpu_name,
                 total=money(quote.total, quote.currency, lang))
        if reply.budget is None and quote is cheapest and ranked[1][1].total > quote.total:
            line += t("quote_options_compared_cheapest", lang,
                      saves=money(ranked[1][1].total - quote.total, quote.currency, lang))
        cheaper_ways = "; ".join(f"{pricing_label(option.pricing, lang)} — {money(option.total, quote.currency, lang)}"
                                 for option in quote.options if option.total < quote.total)
        if cheaper_ways:
            line += t("quote_options_compared_other_ways", lang, ways=cheaper_ways)
        lines.append(markup.text("• " + line))
        lines.append("  " + markup.code("/quote " + request_command(request)))
    if reply.lighter:  # the fit's cheaper ways for the model named, the same term
        lines.append(markup.text(t("quote_lighter_title_train" if reply.lighter[0][0] in ("lora", "qlora")
                                   else "quote_lighter_title_serve", lang)))
        for way, request, quote in reply.lighter:
            lines.append(markup.text("• " + t("quote_lighter_line", lang, way=_way_label(way, lang),
                                              count=quote.gpu_count, gpu=quote.gpu_name,
                                              total=money(quote.total, quote.currency, lang))))
            lines.append("  " + markup.code("/quote " + request_command(request)))
    lines.extend(markup.text("ℹ " + t(f"quote_rule_{rule}", lang)) for rule in first.rules)
    lines.append(markup.text(t("quote_options_compared_hint", lang)))
    return "\n".join(lines)


def _way_label(way: str, lang: Lang) -> str:
    """LoRA, QLoRA, or the compressed weights' format (FP8, AWQ)."""
    return t(f"quote_lighter_{way}", lang) if way in ("lora", "qlora") else \
        t("quote_lighter_weights", lang, quant=WEIGHT_FORMATS[way].label)


def render_fit_reply(reply: FitReply, markup: Markup = PLAIN) -> str:
    lang = reply.lang
    if reply.error is not None:
        return render_fit_error(reply.error, lang, markup) + "\n\n" + markup.text(t("fit_usage", lang))
    if reply.largest:
        return render_largest(reply, markup)
    if len(reply.results) == 1:
        return render_fit(reply.results[0], lang, markup, currency=reply.currency)
    lines = [markup.bold(t("fit_side_by_side_title", lang))]
    for result in reply.results:
        verdict = t("fit_verdict_fits" if result.fits else "fit_verdict_no_fit", lang)
        lines.append(markup.text("• " + t("fit_side_by_side_line", lang, gpu=result.gpu.name, verdict=verdict,
                                          total=f"{result.per_gpu.total / GIB:.1f}",
                                          usable=f"{result.usable_bytes / GIB:.1f}")))
    bodies = [render_fit(result, lang, markup, currency=reply.currency) for result in reply.results]
    return "\n".join(lines) + "\n\n" + "\n\n".join(bodies)


def render_largest(reply: FitReply, markup: Markup = PLAIN) -> str:
    """The largest models that fit a GPU, one per weight format, each with its fit underneath."""
    lang = reply.lang
    gpu = reply.routing.slots.gpus[0] if reply.routing.slots.gpus else None
    if not reply.results:
        return markup.text(t("fit_largest_none", lang, gpu=gpu.name if gpu else "GPU"))
    first = reply.results[0]
    lines = [markup.bold(t("fit_largest_title", lang, count=first.request.gpu_count, gpu=first.gpu.name))]
    for result in reply.results:
        lines.append(markup.text("• " + t("fit_largest_line", lang, format=format_label(result.request.quant),
                                          model=result.request.model.name,
                                          total=f"{result.per_gpu.total / GIB:.1f}",
                                          usable=f"{result.usable_bytes / GIB:.1f}")))
    lines.append(markup.text(t("fit_largest_how", lang)))
    bodies = [render_fit(result, lang, markup, currency=reply.currency) for result in reply.results]
    return "\n".join(lines) + "\n\n" + "\n\n".join(bodies)


def format_label(quant: str) -> str:
    return {"bf16": "BF16", "fp16": "FP16", "q4_k_m": "GGUF Q4_K_M (4-bit)"}.get(quant, quant.upper())


def render_quote_reply(reply: QuoteReply, markup: Markup = PLAIN) -> str:
    lang = reply.lang
    if reply.error is not None or reply.quote is None:
        assert reply.error is not None
        return render_input_error(reply.error, lang, markup)
    if reply.options:
        return render_quote_options(reply, markup)
    body = render_quote(reply.quote, lang, markup)
    return body + "\n\n" + markup.text(t("quote_free_text_hint", lang, request=quote_command(reply)))


def clarify_question(reply: ClarifyReply) -> str:
    lang = reply.lang
    if reply.missing == "duration":
        return t("clarify_duration", lang, known=reply.known or "GPU")
    if reply.missing == "gpu":
        known = t("clarify_known_for", lang, duration=reply.known) if reply.known else ""
        if reply.count is not None:  # "need 16 gpus for a week": the count asked stays in the question
            known = t("clarify_known_count", lang, count=reply.count) + known
        return t("clarify_gpu", lang, known=known)
    known = t("clarify_known_on", lang, gpu=reply.known) if reply.known else ""
    return t("clarify_model", lang, known=known)


def render_clarify(reply: ClarifyReply, markup: Markup = PLAIN, *, with_options: bool = True) -> str:
    text = markup.text(clarify_question(reply))
    if with_options and reply.options:
        options = ", ".join(option.label for option in reply.options)
        text += "\n" + markup.text(t("clarify_options", reply.lang, options=options))
    return text


def render_text(reply: Reply, data: GpuData, markup: Markup = PLAIN) -> str:
    """The whole reply as text, for every kind but a glossary answer."""
    lang: Lang = reply.lang
    if isinstance(reply, FitReply):
        return render_fit_reply(reply, markup)
    if isinstance(reply, QuoteReply):
        return render_quote_reply(reply, markup)
    if isinstance(reply, CatalogReply):
        return render_catalog_answer(reply.intent, data, lang, markup)
    if isinstance(reply, CompareReply):
        assert reply.comparison is not None
        return render_comparison(reply.comparison, lang, markup)
    if isinstance(reply, LifecycleReply):
        assert reply.answer is not None
        return render_lifecycle(reply.answer, lang, markup)
    if isinstance(reply, SmallTalkReply):
        return render_smalltalk(reply.kind, lang, markup)
    if isinstance(reply, ClarifyReply):
        return render_clarify(reply, markup)
    if isinstance(reply, RefusalReply):
        return markup.text(reply.reason.render(lang))
    raise ValueError(f"{type(reply).__name__} is streamed by the answerer, not rendered here")


_SOURCES: dict[str, tuple[str, str]] = {
    "fit": ("fit_engine", "data/models.yaml, data/gpus.yaml"),
    "quote": ("price_list", CATALOG_FILES["price_list"]),
    "price": ("price_list", CATALOG_FILES["price_list"]),
    "spec": ("gpu_catalog", "data/gpus.yaml"),
    "compare": ("gpu_catalog", "data/gpus.yaml, data/prices.yaml"),
}


def _catalog(catalog: CatalogSource, lang: Lang) -> dict[str, Any]:
    return {"id": catalog, "term": t(f"source_{catalog}", lang), "definition": "", "source": CATALOG_FILES[catalog]}


def reply_json(reply: Reply, data: GpuData) -> dict[str, Any]:
    """The ``ask --json`` document of a reply that did not come from the model (the contract's keys, plus
    ``intent`` and ``slots``: why the message went where it went)."""
    if isinstance(reply, GlossaryReply):
        raise ValueError("a glossary answer's document comes from the answer")
    text = render_text(reply, data)
    intent = reply.routing.intent
    sources: list[dict[str, Any]] = []
    caveats: list[dict[str, str]] = []
    if isinstance(reply, CatalogReply) and reply.intent.kind == "rule":
        entries = list(dict.fromkeys(answer.entry for answer in reply.intent.rules))
        sources = [{"id": e.id, "term": e.term, "definition": e.definition, "source": e.source} for e in entries]
        sources += [_catalog(catalog, reply.lang) for catalog in reply.intent.catalogs]
        found = dict.fromkeys(caveat for answer in reply.intent.rules for caveat in answer.caveats)
        caveats = [{"source": c.source, "text": c.quote} for c in found]
    elif isinstance(reply, LifecycleReply) and reply.answer is not None:
        sources = [{"id": quote.entry_id, "term": quote.term, "definition": quote.quote, "source": quote.source}
                   for quote in reply.answer.quotes]
        sources.append({"id": "product_rules", "term": t("source_product_rules", reply.lang), "definition": "",
                        "source": "gpu/placements"})
        sources += [_catalog(catalog, reply.lang) for catalog in reply.answer.catalogs]
    elif intent in _SOURCES:
        source_id, where = _SOURCES[intent]
        sources = [{"id": source_id, "term": t(f"source_{source_id}", reply.lang), "definition": "",
                    "source": where}]
    document: dict[str, Any] = {
        "answer": text, "grounded": not isinstance(reply, RefusalReply | ClarifyReply | SmallTalkReply),
        "sources": sources, "model": "none", "ttft_s": 0.0, "tokens": 0, "caveats": caveats,
        **reply.routing.to_json(),
    }
    if isinstance(reply, ClarifyReply):
        document["missing"] = reply.missing
        document["options"] = [{"label": option.label, "value": option.value} for option in reply.options]
    if isinstance(reply, FitReply) and reply.results:
        document["fit"] = [result_json(result, reply.lang) for result in reply.results]
    if isinstance(reply, FitReply) and reply.largest:
        document["largest"] = True  # the results are the largest models that fit, one per weight format
    if isinstance(reply, QuoteReply) and reply.quote is not None:
        document["quote"] = {"total": str(reply.quote.total), "currency": reply.quote.currency,
                             "command": "/quote " + quote_command(reply)}
        if reply.options:
            document["quotes"] = [{"gpu": quote.gpu_id, "count": quote.gpu_count, "total": str(quote.total),
                                   "currency": quote.currency, "command": "/quote " + request_command(request)}
                                  for request, quote in reply.options]
        if reply.budget is not None:
            document["budget"] = str(reply.budget)
        if reply.fitted_model:
            document["fitted_model"] = reply.fitted_model
        if reply.lighter:  # the fit's cheaper ways, the same term
            document["cheaper_ways"] = [{"way": way, "gpu": quote.gpu_id, "count": quote.gpu_count,
                                         "total": str(quote.total), "currency": quote.currency,
                                         "command": "/quote " + request_command(request)}
                                        for way, request, quote in reply.lighter]
    if isinstance(reply, CompareReply) and reply.comparison is not None:
        document["comparison"] = comparison_json(reply.comparison)
    return document
