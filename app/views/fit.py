"""A fit result as the user sees it, in Russian or English, as Telegram HTML or plain text (console, CLI),
and as the ``anchorgpu fit --json`` contract. Every line and note comes from the i18n catalog."""

from __future__ import annotations

from typing import Any

from app.views.table import Report, Table, Text
from gpu.fit.engine import GIB, FitResult, Suggestion
from gpu.fit.quant import WEIGHT_FORMATS
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def _gib(value: float) -> float:
    return round(value / GIB, 2)


def result_json(result: FitResult, lang: Lang = "en") -> dict[str, Any]:
    """The CLI contract (keys fixed), plus a few extra keys after them; notes rendered in ``lang``."""
    req, per = result.request, result.per_gpu
    count = req.gpu_count
    return {
        "fits": result.fits,
        "model": req.model.id,
        "mode": req.mode if req.model.kind == "llm" else req.model.kind,
        "quant": req.quant,
        "gpu": result.gpu.id,
        "gpu_count": count,
        "context": req.effective_context,
        "batch": req.batch,
        "weights_gib": _gib(result.weights_total),
        "kv_cache_gib": _gib(result.kv_total),
        "activations_gib": _gib(per.activations),
        "overhead_gib": _gib(per.overhead),
        "total_gib": _gib(per.total * count),
        "per_gpu_gib": _gib(per.total),
        "usable_per_gpu_gib": _gib(result.usable_bytes),
        "min_gpus": result.min_gpus,
        "max_context": result.max_context,
        "decode_tokens_per_s_max": round(tps, 1) if (tps := result.decode_tokens_per_s) else None,
        "notes": [note.render(lang) for note in result.notes],
        # extras (not part of the fixed contract)
        "headroom_gib": _gib(result.headroom_bytes),
        "gradients_gib": _gib(per.gradients),
        "optimizer_gib": _gib(per.optimizer),
        "max_batch_at_context": result.max_batch,
        "parallel": req.effective_parallel if req.model.kind == "llm" else None,
        "kv_dtype": req.kv_dtype,
        "note_codes": [note.to_json() for note in result.notes],
        "cheapest": [
            {"gpu": o.gpu_id, "count": o.count, "per_gpu_gib": round(o.per_gpu_gib, 2),
             "hourly_price": str(o.hourly_price) if o.hourly_price is not None else None}
            for o in result.cheapest
        ],
        "rentable": result.rentable,
        "gpu_name": result.gpu.name,
        "suggestions": [_suggestion_json(s) for s in result.suggestions],
        "lighter": [{"way": way, "gpu": o.gpu_id, "count": o.count, "per_gpu_gib": round(o.per_gpu_gib, 2),
                     "hourly_price": str(o.hourly_price) if o.hourly_price is not None else None}
                    for way, o in result.lighter],
        "suggestion_lines": [_suggestion_line(result, s, lang) for s in result.suggestions],
    }


def _suggestion_json(suggestion: Suggestion) -> dict[str, Any]:
    row: dict[str, Any] = {"kind": suggestion.kind, "value": suggestion.value, "fits": suggestion.fits,
                           "per_gpu_gib": round(suggestion.per_gpu_gib, 2)}
    if suggestion.kind == "offload":
        row["layers"] = suggestion.layers
        row["quant"] = suggestion.quant
    return row


def _suggestion_line(result: FitResult, suggestion: Suggestion, lang: Lang) -> str:
    per_gpu = f"{suggestion.per_gpu_gib:.2f}"
    if suggestion.kind == "quant":
        label = WEIGHT_FORMATS[str(suggestion.value)].label
        key = "fit_suggest_quant" if suggestion.fits else "fit_suggest_quant_none"
        return t(key, lang, quant=label, per_gpu=per_gpu)
    if suggestion.kind == "context":
        return t("fit_suggest_context", lang, tokens=f"{int(suggestion.value):,}", per_gpu=per_gpu)
    if suggestion.kind == "kv_dtype":
        return t("fit_suggest_kv", lang, kv=suggestion.value, per_gpu=per_gpu)
    if suggestion.kind == "gpus":
        if result.request.mode != "inference":  # training splits by its own strategy, not by attention heads
            return t("fit_suggest_gpus_training", lang, count=suggestion.value, gpu=result.gpu.name,
                     per_gpu=per_gpu, parallel=result.request.effective_parallel.upper())
        return t("fit_suggest_gpus", lang, count=suggestion.value, gpu=result.gpu.name, per_gpu=per_gpu)
    if suggestion.kind in ("fsdp", "lora", "qlora"):
        return t(f"fit_suggest_{suggestion.kind}", lang, count=suggestion.value, gpu=result.gpu.name,
                 per_gpu=per_gpu)
    label = WEIGHT_FORMATS[suggestion.quant or "q4_k_m"].label.removeprefix("GGUF ")
    if not suggestion.fits:
        return t("fit_suggest_offload_none", lang, quant=label)
    return t("fit_suggest_offload", lang, quant=label, layers=suggestion.value, total_layers=suggestion.layers)


def _lighter_lines(result: FitResult, lang: Lang, currency: str) -> list[str]:
    """No GPU named: the cheapest configuration of each lighter way (LoRA, QLoRA; FP8 or AWQ weights)."""
    lines = []
    for way, option in result.lighter:
        if way in ("lora", "qlora"):
            line = t(f"fit_suggest_{way}", lang, count=option.count, gpu=option.gpu_name,
                     per_gpu=f"{option.per_gpu_gib:.2f}")
        else:
            line = t("fit_lighter_weights", lang, quant=WEIGHT_FORMATS[way].label, count=option.count,
                     gpu=option.gpu_name, per_gpu=f"{option.per_gpu_gib:.2f}")
        if option.hourly_price is not None:
            line += " — " + t("fit_per_hour", lang, price=option.hourly_price, currency=currency)
        lines.append(line)
    return lines


def _lighter_header(result: FitResult) -> str:
    return "fit_lighter" if result.request.mode == "train" else "fit_lighter_serving"


def _head(result: FitResult) -> str:
    req = result.request
    head = f"{req.model.name} · {WEIGHT_FORMATS[req.quant].label} · {req.gpu_count}× {result.gpu.name}"
    if req.model.kind == "llm":
        head += f" · ctx {req.effective_context:,} · batch {req.batch}"
        if req.mode != "inference":
            head += f" · {req.mode} ({req.effective_parallel})"
    return head


_ROWS = (("fit_weights", "weights"), ("fit_kv", "kv_cache"), ("fit_activations", "activations"),
         ("fit_gradients", "gradients"), ("fit_optimizer", "optimizer"), ("fit_overhead", "overhead"))


def fit_report(result: FitResult, lang: Lang = "en", currency: str = "USD") -> Report:
    """The breakdown as tables: what takes memory per GPU (and on all of them), then the cheapest
    configurations; the verdict, limits, suggestions and notes as text around them."""
    per, count = result.per_gpu, result.request.gpu_count
    memory = []
    for key, attr in _ROWS:
        value = getattr(per, attr)
        if value > 0:
            memory.append((t(key, lang), f"{value / GIB:.2f}", f"{value * count / GIB:.2f}"))
    memory.append((t("rich_fit_usable", lang), f"{result.usable_bytes / GIB:.2f}",
                   f"{result.usable_bytes * count / GIB:.2f}"))
    memory.append((t("rich_fit_headroom", lang), f"{result.headroom_bytes / GIB:+.2f}",
                   f"{result.headroom_bytes * count / GIB:+.2f}"))
    blocks: list[Text | Table] = [Text(t("fit_fits" if result.fits else "fit_no_fit", lang), bold=True)]
    blocks.append(Table(
        headers=(t("rich_fit_component", lang), t("rich_fit_per_gpu", lang), t("rich_fit_all_gpus", lang)),
        rows=tuple(memory), align=("left", "right", "right"),
        caption=t("rich_fit_memory_caption", lang, count=count, gpu=result.gpu.name),
        total=(t("rich_fit_total", lang), f"{per.total / GIB:.2f}", f"{per.total * count / GIB:.2f}")))
    minimum = str(result.min_gpus) if result.min_gpus else t("fit_min_none", lang)
    facts = [t("fit_min_gpus", lang, gpu=result.gpu.id, count=minimum)]
    if result.max_context:
        facts.append(t("fit_max_context", lang, tokens=f"{result.max_context:,}"))
    if result.max_batch:
        facts.append(t("fit_max_batch", lang, count=result.max_batch))
    if result.decode_tokens_per_s:
        facts.append(t("fit_decode", lang, tps=f"{result.decode_tokens_per_s:,.0f}"))
    blocks.extend(Text(fact) for fact in facts)
    if result.suggestions:
        blocks.append(Text(t("fit_suggestions", lang, gpu=result.gpu.name), bold=True))
        blocks.extend(Text(_suggestion_line(result, s, lang)) for s in result.suggestions)
    if result.cheapest:
        blocks.append(Table(
            headers=(t("rich_fit_gpu", lang), t("rich_fit_count", lang), t("rich_fit_per_gpu", lang),
                     t("rich_fit_price", lang)),
            rows=tuple((option.gpu_name, str(option.count), f"{option.per_gpu_gib:.2f}",
                        t("fit_per_hour", lang, price=option.hourly_price, currency=currency)
                        if option.hourly_price is not None else "—")
                       for option in result.cheapest),
            align=("left", "right", "right", "right"),
            caption=t("fit_cheapest" if result.rentable else "fit_cheapest_rentable", lang)))
    if result.lighter:
        blocks.append(Text(t(_lighter_header(result), lang), bold=True))
        blocks.extend(Text(line) for line in _lighter_lines(result, lang, currency))
    blocks.extend(Text(note.render(lang), note=True) for note in result.notes)
    return Report(title=_head(result), blocks=tuple(blocks))


def render(result: FitResult, lang: Lang = "en", markup: Markup = PLAIN, currency: str = "USD") -> str:
    """The readable breakdown."""
    text, bold = markup.text, markup.bold
    per = result.per_gpu
    head = _head(result)
    lines = [bold(head), bold(t("fit_fits" if result.fits else "fit_no_fit", lang))]
    rows = (("fit_weights", per.weights), ("fit_kv", per.kv_cache), ("fit_activations", per.activations),
            ("fit_gradients", per.gradients), ("fit_optimizer", per.optimizer),
            ("fit_overhead", per.overhead))
    for key, value in rows:
        if value > 0:
            lines.append(text(f"  {t(key, lang)}: {value / GIB:.2f} GiB"))
    lines.append(text("  " + t("fit_total", lang, total=f"{per.total / GIB:.2f}",
                               usable=f"{result.usable_bytes / GIB:.2f}",
                               headroom=f"{result.headroom_bytes / GIB:+.2f}")))
    count = str(result.min_gpus) if result.min_gpus else t("fit_min_none", lang)
    lines.append(text(t("fit_min_gpus", lang, gpu=result.gpu.id, count=count)))
    if result.max_context:
        lines.append(text(t("fit_max_context", lang, tokens=f"{result.max_context:,}")))
    if result.max_batch:
        lines.append(text(t("fit_max_batch", lang, count=result.max_batch)))
    if result.decode_tokens_per_s:
        lines.append(text(t("fit_decode", lang, tps=f"{result.decode_tokens_per_s:,.0f}")))
    if result.suggestions:
        lines.append(bold(t("fit_suggestions", lang, gpu=result.gpu.name)))
        lines.extend(text(f"  {_suggestion_line(result, s, lang)}") for s in result.suggestions)
    if result.cheapest:
        lines.append(bold(t("fit_cheapest" if result.rentable else "fit_cheapest_rentable", lang)))
        for option in result.cheapest:
            price = ""
            if option.hourly_price is not None:
                price = " — " + t("fit_per_hour", lang, price=option.hourly_price, currency=currency)
            lines.append(text(f"  {option.count}× {option.gpu_name}{price}"))
    if result.lighter:
        lines.append(bold(t(_lighter_header(result), lang)))
        lines.extend(text(f"  {line}") for line in _lighter_lines(result, lang, currency))
    lines.extend(text(f"• {note.render(lang)}") for note in result.notes)
    return "\n".join(lines)


def render_error(exc: FitInputError, lang: Lang, markup: Markup = PLAIN) -> str:
    message = exc.phrase.render(lang)
    text = t("fit_error", lang, error=message)
    if exc.suggestions:
        text += "\n" + t("fit_did_you_mean", lang, options=", ".join(exc.suggestions))
    return markup.text(text)


def fit_reply(service: FitService, text: str, lang: Lang, markup: Markup = PLAIN) -> str:
    """The whole reply to ``/fit TEXT`` for a text front (console chat): breakdown, or error and usage."""
    if not text.strip():
        return markup.text(t("fit_usage", lang))
    try:
        return render(service.fit(text), lang, markup, currency=service.currency)
    except FitInputError as exc:
        return render_error(exc, lang, markup) + "\n\n" + markup.text(t("fit_usage", lang))
