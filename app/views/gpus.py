"""/gpus: the GPU catalog with memory, bandwidth, interconnect and the on-demand price."""

from __future__ import annotations

from typing import Any

from app.views.table import Report, Table, Text
from gpu.data import GpuData
from gpu.prices import Term
from gpu.quote.request import Pricing
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def render_gpus(data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    prices = data.prices.current()
    lines = [markup.bold(t("gpus_title", lang)), ""]
    # the rental list: GPUs the catalog only describes (a user's own RTX 3090) are for /fit, not here
    for spec in (data.gpus.get(gpu_id) for gpu_id in data.prices.rentable_ids()):
        line = (f"• {markup.bold(spec.name)} ({markup.code(spec.id)}) — "
                + markup.text(f"{spec.memory_gb:g} GB, {spec.bandwidth_gb_s:g} GB/s, {spec.interconnect}"))
        price = prices.price_for(spec.id)
        if price is not None:
            line += markup.text(", " + t("gpus_price", lang, price=price.on_demand, currency=prices.currency))
            if price.spot is not None:
                line += markup.text(t("gpus_spot", lang, price=price.spot))
        lines.append(line)
    lines += ["", markup.text(t("gpus_footer", lang))]
    return "\n".join(lines)


def gpus_report(data: GpuData, lang: Lang) -> Report:
    """The rental list as one table: memory, bandwidth, interconnect, on-demand and spot price per hour."""
    prices = data.prices.current()
    rows = []
    for spec in (data.gpus.get(gpu_id) for gpu_id in data.prices.rentable_ids()):
        price = prices.price_for(spec.id)
        rows.append((spec.name, spec.id, f"{spec.memory_gb:g}", f"{spec.bandwidth_gb_s:g}", spec.interconnect,
                     str(price.on_demand) if price is not None else "—",
                     str(price.spot) if price is not None and price.spot is not None else "—"))
    table = Table(headers=(t("rich_gpus_name", lang), t("rich_gpus_id", lang), t("rich_gpus_memory", lang),
                           t("rich_gpus_bandwidth", lang), t("rich_gpus_interconnect", lang),
                           t("rich_gpus_on_demand", lang, currency=prices.currency),
                           t("rich_gpus_spot", lang, currency=prices.currency)),
                  rows=tuple(rows), align=("left", "left", "right", "right", "left", "right", "right"))
    return Report(title=t("gpus_title", lang), blocks=(table, Text(t("gpus_footer", lang), note=True)))


def gpus_document(data: GpuData) -> dict[str, Any]:
    """The `anchorgpu gpus --json` document: every catalog GPU with its prices (null = not rented)."""
    catalog, prices = data.gpus, data.prices.current()
    rows = []
    for spec in catalog.all():
        price = prices.price_for(spec.id)
        row: dict[str, Any] = {
            "id": spec.id, "name": spec.name, "vendor": spec.vendor, "memory_gb": spec.memory_gb,
            "available": price is not None, "on_demand_hourly": None, "spot_hourly": None, "terms": None,
            # the spec catalog (data/gpus.yaml), for GPUs rented here or not
            "architecture": spec.architecture, "memory_type": spec.memory_type, "memory_gib": spec.memory_gib,
            "bandwidth_gb_s": spec.bandwidth_gb_s, "fp16_tflops": spec.fp16_tflops,
            "bf16_tflops": spec.bf16_tflops, "fp8_tflops": spec.fp8_tflops, "supports_bf16": spec.supports_bf16,
            "supports_fp8": spec.supports_fp8, "interconnect": spec.interconnect, "tdp_w": spec.tdp_w,
            "source": spec.source,
        }
        if price is not None:
            row["on_demand_hourly"] = format(price.on_demand, "f")
            row["spot_hourly"] = None if price.spot is None else format(price.spot, "f")
            row["terms"] = {term.value: {"hours": term.hours,
                                         "discount_percent": format(price.term_discount_percent[term], "f"),
                                         "price_per_gpu": format(price.term_price[term], "f")}
                            for term in Term}
        rows.append(row)
    return {"price_list_version": prices.version, "currency": prices.currency,
            "effective_date": prices.effective_date.isoformat(), "example_prices": prices.example,
            "pricing_types": [p.value for p in Pricing], "gpus": rows}
