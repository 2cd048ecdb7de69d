"""Price questions never reach the LLM: they are answered from the price list by the quote code.

A small model asked "how much is an H100 per hour?" invents a number with confidence. Questions about
prices (in private chats, and addressed ones in groups) are caught here, before ``ask``: each GPU named in
the question gets its hourly prices from ``data/prices.yaml`` (formatted by ``gpu.quote.render.money``),
followed by how to get an exact quote with ``/quote``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from aiogram import F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from anchorgpu.texts import Lang, t
from bot.filters import AddressedQuestion, Sync
from bot.rendering import escape
from bot.streaming import reply_html
from gpu.quote.render import money

router = Router(name=__name__)

PRICE_QUESTION = re.compile(
    r"(?i)(\bprice[sd]?\b|\bpricing\b|\$|\busd\b|\bdollars?\b|\bруб\w*|₽|\bдоллар\w*"
    r"|\bhow\s+much\b[^?.!]{0,60}\b(cost|costs|rent|rental|pay|charge|charges)\b"
    r"|\bcosts?\b[^?.!]{0,40}\b(rent|rental|per\s+hour|an?\s+hour|hourly|per\s+month|per\s+day)\b"
    r"|\b(rent|rental|renting)\b[^?.!]{0,40}\bcosts?\b"
    r"|\bцен[аыуе]?\b|\bцены\b|\bстоимост\w*|сколько\s+(стоит|стоят|будет\s+стоить)|\bпрайс\w*|\bрасценк\w*)")
MAX_SCANNED_WORDS = 60


def is_price_question(text: str) -> bool:
    return bool(PRICE_QUESTION.search(text))


def gpus_named(text: str, quotes: Any) -> list[str]:
    """Catalog ids named in free text (single words and word pairs, exact catalog spellings only)."""
    words = re.findall(r"[\w\-]+", text.lower())[:MAX_SCANNED_WORDS]
    candidates = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    rentable = set(quotes.rentable_gpu_ids())
    found: list[str] = []
    for candidate in candidates:
        spec = quotes.catalog.find(candidate)
        if spec is not None and spec.id in rentable and spec.id not in found:
            found.append(spec.id)
    return found


def price_lines(quotes: Any, gpu_ids: list[str], lang: Lang) -> list[str]:
    prices = quotes.prices()
    lines = []
    for gpu_id in gpu_ids:
        price = prices.gpus[gpu_id]
        spot = (t("price_spot", lang, price=money(price.spot, prices.currency, lang))
                if price.spot is not None else "")
        lines.append(t("price_line", lang, gpu=quotes.catalog.get(gpu_id).name,
                       price=money(price.on_demand, prices.currency, lang), spot=spot))
    return lines


@router.message(Command("ask"), Sync(F.text.func(is_price_question)))
async def on_ask_price(message: Message, command: CommandObject, lang: Lang = "ru", services: Any = None) -> None:
    await on_price_question(message, command.args or "", lang, services)


@router.message(Sync(F.text), AddressedQuestion(), Sync(F.text.func(is_price_question)))
async def on_price_question(message: Message, question: str, lang: Lang = "ru", services: Any = None) -> None:
    quotes = getattr(services, "quotes", None)
    if quotes is None:
        await reply_html(message, escape(t("quote_unavailable", lang)))
        return
    gpu_ids = gpus_named(question, quotes)
    parts = [t("price_intro", lang)]
    parts += price_lines(quotes, gpu_ids, lang) if gpu_ids else [t("price_no_gpu", lang)]
    example = f"/quote {gpu_ids[0] if gpu_ids else 'h100'} x8 2 weeks"
    parts.append(t("price_how_to_quote", lang, example=example))
    await reply_html(message, escape("\n".join(parts)))
