"""The catalog fact table for :func:`dev.eval.faithfulness.score`, built from the one owner of the data files.

``rag`` does not import ``gpu``, so the faithfulness scorer takes the catalog as plain text keyed by the
refs the set uses (``h100-sxm.memory_gb``, ``price.h100-sxm.on_demand``, ``term.week``...); this is
where those texts come from, for the benchmark and the tests alike.
"""

from __future__ import annotations

from gpu.data import GpuData
from gpu.prices import TERM_HOURS

GPU_FIELDS = ("memory_gb", "memory_gib", "bandwidth_gb_s", "bf16_tflops", "fp8_tflops", "interconnect")


def catalog_facts(data: GpuData) -> dict[str, str]:
    """ref → a short text carrying the fact's numbers (the name too, so "RTX 4090" supports 4090)."""
    facts: dict[str, str] = {}
    for spec in data.gpus.all():
        for name in GPU_FIELDS:
            value = getattr(spec, name)
            facts[f"{spec.id}.{name}"] = f"{spec.name}: {name} {value if value is not None else 'none'}"
    prices = data.prices.current()
    for gpu_id, price in prices.gpus.items():
        facts[f"price.{gpu_id}.on_demand"] = f"{gpu_id} on_demand {price.on_demand} {prices.currency}/h"
        facts[f"price.{gpu_id}.spot"] = (f"{gpu_id} spot {price.spot} {prices.currency}/h" if price.spot is not None
                                         else f"{gpu_id} spot not offered")
        for term, percent in price.term_discount_percent.items():
            facts[f"price.{gpu_id}.discount.{term.value}"] = f"{gpu_id} {term.value} discount {percent} %"
        for term, amount in price.term_price.items():
            facts[f"price.{gpu_id}.{term.value}"] = f"{gpu_id} one {term.value} {amount} {prices.currency}"
    for term, hours in TERM_HOURS.items():
        facts[f"term.{term.value}"] = f"{term.value} = {hours} h = {hours // 24} days"
    return facts
