"""Answers that come from the catalogs, not the model: a GPU's specifications (``data/gpus.yaml``) and the
company's rules quoted from the glossary (``rag.rules``). The user sees where each fact comes from."""

from __future__ import annotations

from app.intents import Intent
from app.views.answer import render_caveats, source_title
from app.views.prices import render_price_answer
from gpu.data import GpuData
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def _number(value: float, lang: Lang) -> str:
    if value < 1000:
        return f"{value:g}"
    grouped = f"{value:,.0f}"
    return grouped.replace(",", "\u00a0") if lang == "ru" else grouped


def render_spec_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    catalog = data.gpus
    lines = []
    for gpu_id in intent.gpu_ids:
        spec = catalog.get(gpu_id)
        facts = []
        for field in intent.spec_fields:
            if field == "memory":
                facts.append(t("spec_memory", lang, gb=_number(spec.memory_gb, lang), gib=f"{spec.memory_gib:g}"))
                if spec.memory_type:
                    facts[-1] += f" {spec.memory_type}"
            elif field == "bandwidth":
                facts.append(t("spec_bandwidth", lang, gb_s=_number(spec.bandwidth_gb_s, lang)))
            elif field == "interconnect":
                facts.append(t("spec_interconnect", lang, interconnect=spec.interconnect))
            elif field == "compute":
                fp8 = (t("spec_fp8", lang, tflops=_number(spec.fp8_tflops, lang)) if spec.fp8_tflops
                       else t("spec_no_fp8", lang))
                bf16 = (t("spec_bf16", lang, tflops=_number(spec.bf16_tflops, lang)) if spec.bf16_tflops
                        else t("spec_no_bf16", lang))
                facts.append(f"{bf16}, {fp8}")
            elif field == "architecture" and spec.architecture:
                facts.append(t("spec_architecture", lang, architecture=spec.architecture))
            elif field == "power" and spec.tdp_w:
                facts.append(t("spec_power", lang, watts=spec.tdp_w))
        if not facts:
            facts.append(t("spec_unknown", lang))
        line = f"{markup.bold(spec.name)}: " + markup.text("; ".join(facts))
        if spec.source:
            line += " " + markup.text(t("spec_row_source", lang, source=spec.source))
        lines.append(line)
    lines.append(markup.italic(t("spec_source", lang)))
    return "\n".join(lines)


def render_rule_answer(intent: Intent, lang: Lang, markup: Markup = PLAIN) -> str:
    verdicts = {answer.verdict for answer in intent.rules if answer.verdict is not None}
    verdict = verdicts.pop() if len(verdicts) == 1 else None
    parts = []
    if verdict is not None:
        parts.append(markup.bold(t(f"rule_{verdict}", lang)))
    quoted: set[str] = set()
    for answer in intent.rules:
        if answer.entry.id in quoted:  # two rules of one entry: the entry is quoted once
            continue
        quoted.add(answer.entry.id)
        original = " ".join(answer.entry.definition.split())
        if lang == "en" and answer.english is not None:  # our translation, the glossary's words one tap away
            parts.append(markup.text(t("rule_intro_translated", lang, term=answer.entry.term)))
            parts.append(markup.quote(answer.english))
            parts.append(markup.details(t("answer_original", lang), original))
            continue
        parts.append(markup.text(t("rule_intro", lang, term=answer.entry.term)))
        parts.append(markup.quote(original))
        if lang == "en":
            parts.append(markup.text(t("rule_in_english", lang, text=answer.rule.en)))
    for answer in intent.rules:
        if answer.rule.derived:
            parts.append(markup.text(answer.rule.derived[lang]))
    sources = list(dict.fromkeys(f"{answer.entry.term} — {source_title(answer.entry.source, lang)}"
                                 for answer in intent.rules))
    sources += [t(f"source_{catalog}", lang) for catalog in intent.catalogs]  # the derived figures' source
    source_key = "rule_source" if verdict is None else "rule_source_verdict"
    if lang == "en" and any(answer.english is not None for answer in intent.rules):
        source_key += "_translated"
    parts.append(markup.italic(t(source_key, lang, sources="; ".join(sources))))
    caveats = list(dict.fromkeys(caveat for answer in intent.rules for caveat in answer.caveats))
    if caveats:
        parts.append(render_caveats(caveats, lang, markup))
    return "\n".join(parts)


def render_model_spec_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    """"What is the context length of llama 3.1": each model's longest context, from its config.json."""
    lines = []
    for model_id in intent.model_ids:
        model = data.models.get(model_id)
        context = getattr(model, "max_context", None)
        lines.append(markup.text(t("model_context_line", lang, model=model.name, tokens=_number(context, lang))
                                 if context else t("model_context_unknown", lang, model=model.name)))
    if not lines:
        lines.append(markup.text(t("model_context_none", lang)))
    lines.append(markup.text(t("model_context_fit_hint", lang)))
    lines.append(markup.italic(t("model_spec_source", lang)))
    return "\n".join(lines)


CATALOG_INTENTS = ("price", "rule", "gpu_spec", "model_spec")


def render_catalog_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    """The reply to a price, rule or GPU specification question (``intent.kind`` in :data:`CATALOG_INTENTS`)."""
    if intent.kind == "price":
        return render_price_answer(intent, data, lang, markup)
    if intent.kind == "rule":
        return render_rule_answer(intent, lang, markup)
    if intent.kind == "gpu_spec":
        return render_spec_answer(intent, data, lang, markup)
    if intent.kind == "model_spec":
        return render_model_spec_answer(intent, data, lang, markup)
    raise ValueError(f"not a catalog intent: {intent.kind}")
