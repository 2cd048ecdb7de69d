"""/admin and /report for the operators (TELEGRAM_ADMIN_IDS); anyone else is told the command is unknown.

Neither command is in anyone's command menu (bot/commands.py): admins know them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from aiogram import Bot, F, Router
from aiogram.filters import Command
from aiogram.types import BufferedInputFile, Message

from app.gaps.chart import render_quality_chart
from app.gaps.log import FeedbackStore
from app.gaps.report import build_report
from app.services import Services
from app.views.report import render_admin_status, render_report_text
from bot.filters import Sync
from bot.health import HealthChecks
from bot.output.streaming import reply_html, reply_parameters, target_of
from infra.i18n import Lang, t
from infra.markup import escape
from infra.settings import Settings
from rag.retrieval.dense import Embedder, embedder_for

log = logging.getLogger(__name__)
router = Router(name=__name__)

REPORT_DAYS = 28  # /report looks back four weeks (the CLI takes --since)


def is_admin(message: Message, settings: Settings) -> bool:
    return message.from_user is not None and message.from_user.id in settings.telegram.admin_ids


async def _refuse(message: Message, lang: Lang) -> None:
    await reply_html(message, escape(t("admin_unknown_command", lang)))


# the two admin commands are rare: a prefix check keeps every other update from parsing them as commands
router.message.filter(Sync(F.text.startswith(("/admin", "/report"))))


@router.message(Command("admin"))
async def on_admin(message: Message, settings: Settings, services: Services, health: HealthChecks,
                   feedback: FeedbackStore | None = None, lang: Lang = "ru") -> None:
    if not is_admin(message, settings):
        await _refuse(message, lang)
        return
    now = datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today: dict[str, int] = {}
    top: list[tuple[int, str, str]] = []
    if feedback is not None:
        today = await feedback.counts_since(midnight)
        top = await feedback.frequent_gaps(now - timedelta(days=7))
    answerer = services.answerer
    text = render_admin_status(
        model=answerer.model_name if answerer is not None and answerer.backend is not None else None,
        index=health.index(), database=await health.database(), redis=await health.redis(),
        waiting=answerer.queue.waiting if answerer is not None else 0, today=today, top_gaps=top, lang=lang)
    await reply_html(message, escape(text))


def _embedder(services: Services) -> Embedder:
    retriever = services.retriever
    if retriever is not None and retriever.embedder is not None:
        return retriever.embedder  # the one already loaded
    return embedder_for(services.settings.rag)


@router.message(Command("report"))
async def on_report(message: Message, bot: Bot, settings: Settings, services: Services,
                    feedback: FeedbackStore | None = None, lang: Lang = "ru") -> None:
    if not is_admin(message, settings):
        await _refuse(message, lang)
        return
    if feedback is None:
        await reply_html(message, escape(t("report_unavailable", lang)))
        return
    since = datetime.now(UTC) - timedelta(days=REPORT_DAYS)
    try:
        report = await build_report(feedback, lambda: _embedder(services), since=since)
        chart = await asyncio.to_thread(render_quality_chart, report["weeks"])
    except Exception:
        log.exception("/report failed")
        await reply_html(message, escape(t("report_unavailable", lang)))
        return
    await reply_html(message, escape(render_report_text(report, lang)))
    target = target_of(message)
    await bot.send_photo(target.chat_id, BufferedInputFile(chart, "quality.png"),
                         caption=t("report_chart_caption", lang), message_thread_id=target.thread_id,
                         reply_parameters=reply_parameters(target.reply_to_message_id))
