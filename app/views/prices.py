"""Price questions answered from the price list (the model never names a price)."""

from __future__ import annotations

import math
import re
from decimal import Decimal

from app.intents import GPUS_PER_SERVER, Intent
from app.views.compare import short_name
from app.views.quote import money
from app.words import DISCOUNT, asks_what_price_covers
from gpu.data import GpuData
from gpu.prices import PriceList, Term
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup

# free capacity asked about: «есть свободные h100 сейчас?», "any free h100 right now?", "in stock?"
FREE_NOW = re.compile(r"(?i)свободн\w*|\bсейчас\b|в\s+наличии|\bfree\b|\bright\s+now\b|\bin\s+stock\b|"
                      r"\bavailable\s+(now|today)\b|\bcapacity\b|\bмощност\w*\s+есть")


def render_price_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    prices = data.prices.current()
    catalog = data.gpus
    parts = [t("price_intro", lang)]
    if asks_what_price_covers(intent.text):  # the price list prices GPU-hours, nothing else
        parts.append(t("price_gpu_hours_only", lang))
        if not intent.gpu_ids and not intent.unpriced:
            parts.append(t("price_ask_for_quote", lang, gpu="H100"))
            return markup.text("\n".join(parts))
    if FREE_NOW.search(intent.text):  # nothing to look up: a simulated rental never runs out
        parts.append(t("price_availability_simulated", lang))
    if intent.cheapest and (intent.gpu_ids or not intent.unpriced):  # "cheapest b200": that it is not rented
        parts += _cheapest_first(intent, data, lang)
    elif intent.gpu_ids or intent.unpriced:
        for gpu_id in intent.gpu_ids:
            price = prices.price_for(gpu_id)
            if price is None:  # the price list changed since the question was classified
                continue
            spot = (t("price_spot", lang, price=money(price.spot, prices.currency, lang))
                    if price.spot is not None else t("price_no_spot", lang))
            parts.append(t("price_line", lang, gpu=catalog.get(gpu_id).name,
                           price=money(price.on_demand, prices.currency, lang), spot=spot))
            parts.append(t("price_discounts", lang, **_discounts(price.term_discount_percent)))
        for gpu_id in intent.unpriced:
            parts.append(t("price_not_rented", lang, gpu=catalog.get(gpu_id).name))
    elif DISCOUNT.search(intent.text):  # "do you give a discount for a month?": the discounts, not every price
        lines = _discount_summary(prices, data, lang)
        if lines:
            first = next(iter(_discount_groups(prices)))
            return markup.text("\n".join([t("price_discounts_answer", lang, **dict(first)), *lines[1:],
                                            t("price_discounts_terms", lang),
                                            t("price_discounts_ask_for_quote", lang, gpu="H100")]))
    else:  # "what gpus do you have", «ваши цены?»: every GPU we rent, at its hourly price
        parts.append(t("price_no_gpu", lang))
        for gpu_id in data.prices.rentable_ids():
            price = prices.price_for(gpu_id)
            if price is None:
                continue
            spot = t("price_spot", lang, price=money(price.spot, prices.currency, lang)) if price.spot is not None \
                else ""
            parts.append(t("price_line", lang, gpu=catalog.get(gpu_id).name,
                           price=money(price.on_demand, prices.currency, lang), spot=spot))
        parts += _discount_summary(prices, data, lang)
    if intent.unpriced and not intent.gpu_ids and not intent.cheapest:
        # "do you have b200?": nothing asked is rented, so no total to offer; what is rented instead
        rented = ", ".join(catalog.get(gpu_id).name.replace("NVIDIA ", "").replace("AMD ", "")
                           for gpu_id in data.prices.rentable_ids())
        parts.append(t("price_rented_instead", lang, gpus=rented))
        return markup.text("\n".join(parts))
    # an example in the customer's own words, never a count or a term nobody asked for
    # («2 RTX 4090 на неделю», not «2 GeForce…»: the name without its vendor, product line and memory size)
    gpu = re.sub(r"\s+\d+\s?GB$", "", short_name(catalog.get(intent.gpu_ids[0]))) if intent.gpu_ids else "H100"
    if intent.memory_in_total:
        parts.append(t("price_ask_for_quote_memory", lang, gb=intent.min_memory_gb))  # a total: the sets priced
    else:
        parts.append(t("price_ask_for_quote", lang, gpu=gpu))
    return markup.text("\n".join(parts))


def _discounts(percent: dict[Term, Decimal]) -> dict[str, str]:
    return {term.value: format(percent[term].normalize(), "f") for term in Term}


def _discount_groups(prices: PriceList) -> dict[tuple[tuple[str, str], ...], list[str]]:
    """The GPUs by their term discounts, the discounts most GPUs have first."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for gpu_id, price in prices.gpus.items():
        groups.setdefault(tuple(_discounts(price.term_discount_percent).items()), []).append(gpu_id)
    return dict(sorted(groups.items(), key=lambda item: -len(item[1])))


def _discount_summary(prices: PriceList, data: GpuData, lang: Lang) -> list[str]:
    """"какая скидка за месяц?": the term discounts most GPUs have, then each GPU that differs."""
    groups = _discount_groups(prices)
    if not groups:
        return []
    common = next(iter(groups))
    lines = [t("price_discounts_all", lang, **dict(common))]
    for key, gpu_ids in groups.items():
        if key != common:
            names = ", ".join(data.gpus.get(gpu_id).name for gpu_id in gpu_ids)
            lines.append(t("price_discounts_other", lang, gpus=names, **dict(key)))
    return lines


def _cheapest_first(intent: Intent, data: GpuData, lang: Lang) -> list[str]:
    """The rented GPUs (those named, else all of at least the memory asked) by on-demand price, cheapest first."""
    if intent.memory_in_total and intent.min_memory_gb:  # no one GPU has it: the sets that add up to it
        return _sets_adding_up(intent.min_memory_gb, data, lang)
    prices = data.prices.current()
    candidates = [gpu_id for gpu_id in (intent.gpu_ids or data.prices.rentable_ids())
                  if prices.price_for(gpu_id) is not None
                  and data.gpus.get(gpu_id).memory_gb >= (intent.min_memory_gb or 0)]
    if not candidates:
        return [t("price_cheapest_none", lang, gb=intent.min_memory_gb or 0)]
    candidates.sort(key=lambda gpu_id: (prices.price_for(gpu_id).on_demand, gpu_id))  # type: ignore[union-attr]
    lines = [t("price_cheapest_title", lang) if intent.min_memory_gb is None
             else t("price_cheapest_title_memory", lang, gb=intent.min_memory_gb)]
    for rank, gpu_id in enumerate(candidates):
        price = prices.price_for(gpu_id)
        assert price is not None
        spot = t("price_spot", lang, price=money(price.spot, prices.currency, lang)) if price.spot is not None else ""
        line = t("price_line", lang, gpu=data.gpus.get(gpu_id).name,
                 price=money(price.on_demand, prices.currency, lang), spot=spot)
        lines.append(line + (t("price_cheapest_mark", lang) if rank == 0 else ""))
    return lines


def _sets_adding_up(total_gb: int, data: GpuData, lang: Lang) -> list[str]:
    """"I need 640GB of VRAM": no card has it, so the sets of each rented GPU that add up to it (those one
    server holds, when any does), the cheapest per hour first."""
    prices = data.prices.current()
    sets = []
    for gpu_id in data.prices.rentable_ids():
        price = prices.price_for(gpu_id)
        if price is None:
            continue
        spec = data.gpus.get(gpu_id)
        count = math.ceil(total_gb / spec.memory_gb)
        sets.append((price.on_demand * count, count, gpu_id, spec))
    most = GPUS_PER_SERVER if any(count <= GPUS_PER_SERVER for _, count, _, _ in sets) \
        else data.prices.current().max_gpus_per_quote
    sets = sorted((item for item in sets if item[1] <= most), key=lambda item: (item[0], item[2]))
    lines = [t("price_sets_title", lang, gb=total_gb)]
    for hourly, count, _gpu_id, spec in sets:
        lines.append(t("price_set_line", lang, count=count, gpu=spec.name, gb=f"{count * spec.memory_gb:g}",
                       price=money(hourly, prices.currency, lang)))
    return lines
