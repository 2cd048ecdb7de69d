"""Price questions answered from the price list (the model never names a price)."""

from __future__ import annotations

from app.intents import Intent
from app.views.quote import money
from gpu.data import GpuData
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup


def render_price_answer(intent: Intent, data: GpuData, lang: Lang, markup: Markup = PLAIN) -> str:
    prices = data.prices.current()
    catalog = data.gpus
    parts = [t("price_intro", lang)]
    if intent.gpu_ids:
        for gpu_id in intent.gpu_ids:
            price = prices.price_for(gpu_id)
            if price is None:  # the price list changed since the question was classified
                continue
            spot = (t("price_spot", lang, price=money(price.spot, prices.currency, lang))
                    if price.spot is not None else "")
            parts.append(t("price_line", lang, gpu=catalog.get(gpu_id).name,
                           price=money(price.on_demand, prices.currency, lang), spot=spot))
    else:
        parts.append(t("price_no_gpu", lang))
    example = f"/quote {intent.gpu_ids[0] if intent.gpu_ids else 'h100'} x8 2 weeks"
    parts.append(t("price_how_to_quote", lang, example=example))
    return markup.text("\n".join(parts))
