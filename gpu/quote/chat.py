"""/quote and /quotes for text front ends without Telegram (the console chat): plain text replies."""

from __future__ import annotations

from anchorgpu.texts import Lang, t
from gpu.quote.render import render_conflict, render_input_error, render_issued, render_recent
from gpu.quote.request import QuoteInputError
from gpu.quote.service import QuoteService
from gpu.quote.store import IdempotencyConflictError

CONSOLE_OWNER = "console:local"


async def quote_reply(service: QuoteService | None, text: str, lang: Lang, owner: str = CONSOLE_OWNER) -> str:
    if service is None:
        return t("quote_unavailable", lang)
    if not text.strip():
        return t("quote_usage", lang)
    try:
        issued = await service.quote_text(text, owner=owner)
    except QuoteInputError as exc:
        return render_input_error(exc, lang, html=False) + "\n\n" + t("quote_usage", lang)
    except IdempotencyConflictError as exc:
        return render_conflict(exc, lang, html=False)
    return render_issued(issued, lang, html=False)


async def quotes_reply(service: QuoteService | None, lang: Lang, owner: str = CONSOLE_OWNER) -> str:
    if service is None:
        return t("quote_unavailable", lang)
    return render_recent(await service.recent(owner), lang, html=False)
