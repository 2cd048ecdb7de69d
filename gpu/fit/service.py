"""FitService: catalogs + parser + engine + prices, and the contract JSON / readable text of a result."""

from __future__ import annotations

import html
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from anchorgpu.texts import Lang, t
from gpu.catalog import DEFAULT_DATA_DIR, GPUCatalog, load_gpu_catalog
from gpu.fit.engine import GIB, FitEngine, FitResult, PriceLookup
from gpu.fit.models import ModelCatalog, ModelInputError, ModelSpec, load_model_catalog
from gpu.fit.quant import WEIGHT_FORMATS
from gpu.fit.request import FitInputError, RequestParser


def load_price_map(data_dir: Path) -> dict[str, Decimal]:
    """On-demand hourly prices by GPU id from data/prices.yaml (owned by /quote); {} when absent."""
    path = data_dir / "prices.yaml"
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    prices: dict[str, Decimal] = {}
    rows = document.get("gpus") if isinstance(document, dict) else None
    if isinstance(rows, dict):
        for gpu_id, row in rows.items():
            value = row.get("on_demand") if isinstance(row, dict) else row
            try:
                prices[str(gpu_id)] = Decimal(str(value))
            except (InvalidOperation, ValueError):
                continue
    return prices


class FitService:
    def __init__(self, gpus: GPUCatalog, models: ModelCatalog,
                 prices: PriceLookup | dict[str, Decimal] | None = None, currency: str = "USD") -> None:
        self.gpus = gpus
        self.models = models
        self.engine = FitEngine(gpus, prices)
        self.parser = RequestParser(gpus, models)
        self.currency = currency

    @classmethod
    def from_data_dir(cls, data_dir: Path | None = None) -> FitService:
        directory = data_dir or DEFAULT_DATA_DIR
        return cls(load_gpu_catalog(directory), load_model_catalog(directory), load_price_map(directory))

    def fit(self, text: str, model: ModelSpec | None = None) -> FitResult:
        """Parse and evaluate; raises FitInputError with a useful message and suggestions."""
        try:
            parsed = self.parser.parse(text, model=model)
        except ModelInputError as exc:
            raise FitInputError(str(exc)) from None
        result = self.engine.evaluate(parsed.request)
        if parsed.ignored:
            result.notes.append("Ignored words: " + ", ".join(parsed.ignored))
        return result


def _gib(value: float) -> float:
    return round(value / GIB, 2)


def result_json(result: FitResult) -> dict[str, Any]:
    """The CLI contract (keys fixed), plus a few extra keys after them."""
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
        "notes": list(result.notes),
        # extras (not part of the fixed contract)
        "headroom_gib": _gib(result.headroom_bytes),
        "gradients_gib": _gib(per.gradients),
        "optimizer_gib": _gib(per.optimizer),
        "max_batch_at_context": result.max_batch,
        "parallel": req.effective_parallel if req.model.kind == "llm" else None,
        "kv_dtype": req.kv_dtype,
        "cheapest": [
            {"gpu": o.gpu_id, "count": o.count, "per_gpu_gib": round(o.per_gpu_gib, 2),
             "hourly_price": str(o.hourly_price) if o.hourly_price is not None else None}
            for o in result.cheapest
        ],
    }


def render(result: FitResult, lang: Lang = "en", as_html: bool = False, currency: str = "USD") -> str:
    """Readable breakdown (ru/en strings from anchorgpu.texts); HTML-escaped for Telegram when `as_html`."""
    esc = (lambda s: html.escape(s, quote=False)) if as_html else (lambda s: s)
    bold = (lambda s: f"<b>{esc(s)}</b>") if as_html else (lambda s: s)
    req, per = result.request, result.per_gpu
    head = f"{req.model.name} · {WEIGHT_FORMATS[req.quant].label} · {req.gpu_count}× {result.gpu.name}"
    if req.model.kind == "llm":
        head += f" · ctx {req.effective_context:,} · batch {req.batch}"
        if req.mode != "inference":
            head += f" · {req.mode} ({req.effective_parallel})"
    lines = [bold(head), bold(t("fit_fits" if result.fits else "fit_no_fit", lang))]
    rows = (("fit_weights", per.weights), ("fit_kv", per.kv_cache), ("fit_activations", per.activations),
            ("fit_gradients", per.gradients), ("fit_optimizer", per.optimizer),
            ("fit_overhead", per.overhead))
    for key, value in rows:
        if value > 0:
            lines.append(esc(f"  {t(key, lang)}: {value / GIB:.2f} GiB"))
    lines.append(esc("  " + t("fit_total", lang, total=f"{per.total / GIB:.2f}",
                              usable=f"{result.usable_bytes / GIB:.2f}",
                              headroom=f"{result.headroom_bytes / GIB:+.2f}")))
    count = str(result.min_gpus) if result.min_gpus else t("fit_min_none", lang)
    lines.append(esc(t("fit_min_gpus", lang, gpu=result.gpu.id, count=count)))
    if result.max_context:
        lines.append(esc(t("fit_max_context", lang, tokens=f"{result.max_context:,}")))
    if result.max_batch:
        lines.append(esc(t("fit_max_batch", lang, count=result.max_batch)))
    if result.decode_tokens_per_s:
        lines.append(esc(t("fit_decode", lang, tps=f"{result.decode_tokens_per_s:,.0f}")))
    if result.cheapest:
        lines.append(bold(t("fit_cheapest", lang)))
        for option in result.cheapest:
            price = ""
            if option.hourly_price is not None:
                price = " — " + t("fit_per_hour", lang, price=option.hourly_price, currency=currency)
            lines.append(esc(f"  {option.count}× {option.gpu_name}{price}"))
    lines.extend(esc(f"• {note}") for note in result.notes)
    return "\n".join(lines)


def render_error(exc: FitInputError, lang: Lang, as_html: bool = False) -> str:
    esc = (lambda s: html.escape(s, quote=False)) if as_html else (lambda s: s)
    text = t("fit_error", lang, error=exc.message)
    if exc.suggestions and "Did you mean" not in exc.message:
        text += "\n" + t("fit_did_you_mean", lang, options=", ".join(exc.suggestions))
    return esc(text)


def fit_reply(service: FitService | None, text: str, lang: Lang) -> str:
    """The console chat's /fit answer (plain text)."""
    if not text.strip():
        return t("fit_usage", lang)
    fit = service or FitService.from_data_dir()
    try:
        return render(fit.fit(text), lang, currency=fit.currency)
    except FitInputError as exc:
        return render_error(exc, lang) + "\n\n" + t("fit_usage", lang)
