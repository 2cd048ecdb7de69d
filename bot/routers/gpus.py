"""/gpus: the GPU catalog with memory and the lowest on-demand price."""

from __future__ import annotations

import logging
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message

from anchorgpu.settings import Settings
from anchorgpu.texts import Lang, t
from bot.rendering import escape
from bot.streaming import reply_html

log = logging.getLogger(__name__)
router = Router(name=__name__)


@lru_cache(maxsize=4)
def _catalog_and_prices(data_dir: Path) -> tuple[Any, Any]:
    from gpu.catalog import load_gpu_catalog

    catalog = load_gpu_catalog(data_dir)
    try:
        from gpu.quote.prices import load_price_list

        prices = load_price_list(data_dir, known_gpu_ids=set(catalog.ids()))
    except Exception as exc:  # prices are optional here: the catalog alone is still useful
        log.warning("price list unavailable: %s", exc)
        prices = None
    return catalog, prices


def render_gpus(settings: Settings, lang: Lang) -> str:
    catalog, prices = _catalog_and_prices(settings.data.data_dir)
    lines = [f"<b>{escape(t('gpus_title', lang))}</b>", ""]
    for spec in catalog.all():
        line = (f"• <b>{escape(spec.name)}</b> (<code>{escape(spec.id)}</code>) — "
                f"{spec.memory_gb:g} GB, {spec.bandwidth_gb_s:g} GB/s, {escape(spec.interconnect)}")
        price = prices.price_for(spec.id) if prices is not None else None
        if price is not None:
            line += ", " + escape(t("gpus_price", lang, price=price.on_demand, currency=prices.currency))
            if isinstance(price.spot, Decimal):
                line += escape(t("gpus_spot", lang, price=price.spot))
        lines.append(line)
    lines += ["", escape(t("gpus_footer", lang))]
    return "\n".join(lines)


@router.message(Command("gpus"))
async def on_gpus(message: Message, settings: Settings, lang: Lang) -> None:
    try:
        text = render_gpus(settings, lang)
    except Exception:
        log.exception("could not render the GPU catalog")
        text = escape(t("feature_unavailable", lang))
    await reply_html(message, text)
