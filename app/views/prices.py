"""Price questions answered from the price list (the model never names a price)."""

from __future__ import annotations

from decimal import Decimal

from app.intents import Intent
from app.views.quote import money
from gpu.data import GpuData
from gpu.prices import PriceList, Term
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def render_price_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    prices = data.prices.current()
    catalog = data.gpus
    parts = [t("price_intro", lang)]
    if intent.gpu_ids or intent.unpriced:
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
    # an example in the customer's own words, never a count or a term nobody asked for
    gpu = catalog.get(intent.gpu_ids[0]).name.replace("NVIDIA ", "").split()[0] if intent.gpu_ids else "H100"
    parts.append(t("price_ask_for_quote", lang, gpu=gpu))
    return markup.text("\n".join(parts))


def _discounts(percent: dict[Term, Decimal]) -> dict[str, str]:
    return {term.value: format(percent[term].normalize(), "f") for term in Term}


def _discount_summary(prices: PriceList, data: GpuData, lang: Lang) -> list[str]:
    """"какая скидка за месяц?": the term discounts most GPUs have, then each GPU that differs."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for gpu_id, price in prices.gpus.items():
        groups.setdefault(tuple(_discounts(price.term_discount_percent).items()), []).append(gpu_id)
    if not groups:
        return []
    common = max(groups, key=lambda key: len(groups[key]))
    lines = [t("price_discounts_all", lang, **dict(common))]
    for key, gpu_ids in groups.items():
        if key != common:
            names = ", ".join(data.gpus.get(gpu_id).name for gpu_id in gpu_ids)
            lines.append(t("price_discounts_other", lang, gpus=names, **dict(key)))
    return lines
