"""Telegram's rendering of the reply pipeline's typed replies (a glossary answer streams elsewhere).

Fits, quotes and comparisons go out as rich tables when the chat takes them (their HTML otherwise); a
clarifying question carries a button per common answer — pressing one sends its value through the same
pipeline, as if typed, and completes the request (:class:`bot.ui.callbacks.ClarifyButton`, handled by the ask router).
"""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import Message

from app.reply import ClarifyReply, CompareReply, FitReply, QuoteReply, Reply
from app.views.compare import compare_report
from app.views.quote import quote_report
from app.views.reply import quote_command, render_clarify, render_text
from app.views.table import Report, Text
from bot.output.fit_reply import send_fit_result
from bot.output.rich import RichReplies, try_rich
from bot.output.streaming import reply_html, target_of
from bot.ui.keyboards import clarify_keyboard
from gpu.data import GpuData
from infra.i18n import t
from infra.markup import HTML


async def send_reply(message: Message, bot: Bot, reply: Reply, data: GpuData,
                     rich: RichReplies | None = None) -> None:
    """Send a reply that is not a glossary answer."""
    if isinstance(reply, FitReply) and len(reply.results) == 1 and reply.error is None and not reply.largest:
        await send_fit_result(message, bot, reply.results[0], reply.lang, reply.currency, rich=rich)
        return
    report: Report | None = None
    if isinstance(reply, QuoteReply) and reply.quote is not None and not reply.options:
        report = quote_report(reply.quote, reply.lang)
    elif isinstance(reply, CompareReply) and reply.comparison is not None:
        report = compare_report(reply.comparison, reply.lang)
    if report is not None and await try_rich(bot, target_of(message), _with_hint(report, reply), lang=reply.lang,
                                             rich=rich) is not None:
        return
    if isinstance(reply, ClarifyReply):
        await reply_html(message, render_clarify(reply, HTML, with_options=False),
                         reply_markup=clarify_keyboard(reply))
        return
    await reply_html(message, render_text(reply, data, HTML))


def _with_hint(report: Report, reply: Reply) -> Report:
    """A free-text quote says how to save it with an id (the /quote command that issues it)."""
    if not isinstance(reply, QuoteReply) or reply.request is None:
        return report
    hint = Text(t("quote_free_text_hint", reply.lang, request=quote_command(reply)), note=True)
    return Report(title=report.title, blocks=(*report.blocks, hint))
