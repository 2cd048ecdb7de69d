"""The reply to a fit: rich tables with the chart and the "quote it" buttons, else the captioned chart or HTML.

Used by the /fit router and by the reply pipeline (a VRAM question in plain text, :mod:`bot.output.replies`).
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import AiogramError
from aiogram.types import Message

from app.views.fit import fit_report, render, render_error
from bot.output.charts import CAPTION_LIMIT, CHART_PHOTOS
from bot.output.rendering import strip_tags, utf16_len
from bot.output.rich import RichReplies, try_rich
from bot.output.streaming import Target, reply_html, target_of
from bot.ui.keyboards import fit_quote_buttons
from gpu.fit.architectures import ModelSpec
from gpu.fit.engine import FitResult
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)


async def send_fit(message: Message, bot: Bot, service: FitService, text: str, lang: Lang,
                   model: ModelSpec | None = None, rich: RichReplies | None = None) -> None:
    try:
        result = service.fit(text, model=model)
    except FitInputError as exc:
        usage = escape(t("fit_usage", lang))
        await reply_html(message, render_error(exc, lang, HTML) + "\n\n" + usage)
        return
    await send_fit_result(message, bot, result, lang, service.currency, rich=rich)


async def send_fit_result(message: Message, bot: Bot, result: FitResult, lang: Lang, currency: str,
                          rich: RichReplies | None = None) -> None:
    """One fit result: rich tables with the chart and the quote buttons, else the captioned chart or HTML."""
    breakdown = render(result, lang, HTML, currency=currency)
    markup = fit_quote_buttons(result, lang)
    target = target_of(message)
    # one rich message: the breakdown as tables, the chart under its own short caption, the quote buttons;
    # refused, the reply is the one of before (the chart captioned with the breakdown)
    chart = CHART_PHOTOS.rich_photo(bot, result, t("fit_chart_caption", lang, model=result.request.model.name))
    if await try_rich(bot, target, fit_report(result, lang, currency=currency), lang=lang, rich=rich,
                      reply_markup=markup, photo=chart) is not None:
        return
    if utf16_len(strip_tags(breakdown)) <= CAPTION_LIMIT:
        # One message: the chart with its breakdown as the caption (groups allow ~20 messages a minute).
        try:
            await CHART_PHOTOS.send(bot, target, result, breakdown, reply_markup=markup)
            return
        except AiogramError as exc:  # the server's trouble (a 5xx, a body no Bot API sends): no traceback
            log.warning("fit chart not sent (%s: %s); sending the breakdown as text", type(exc).__name__, exc)
        except Exception:  # the breakdown must still arrive: as text, below
            log.exception("fit chart failed; sending the breakdown as text")
        await reply_html(message, breakdown, reply_markup=markup)
        return
    await reply_html(message, breakdown, reply_markup=markup)
    await _send_chart(bot, target, result, lang)


async def _send_chart(bot: Bot, target: Target, result: FitResult, lang: Lang) -> None:
    """The chart after the breakdown went out as text or a table."""
    try:
        caption = escape(t("fit_chart_caption", lang, model=result.request.model.name))
        await CHART_PHOTOS.send(bot, target, result, caption, reply=False)
    except AiogramError as exc:
        log.warning("fit chart not sent (%s: %s)", type(exc).__name__, exc)
    except Exception:  # the text answer already went out; a chart failure must not hide it
        log.exception("fit chart failed")
