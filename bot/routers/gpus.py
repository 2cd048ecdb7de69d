"""/gpus: the GPU catalog with memory and the on-demand price (from the price list's one owner)."""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.filters import Command
from aiogram.types import Message

from app.views.gpus import gpus_report, render_gpus
from bot.output.rich import RichReplies, send_report
from bot.output.streaming import reply_html, target_of
from gpu.data import GpuData
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)
router = Router(name=__name__)


@router.message(Command("gpus"))
async def on_gpus(message: Message, bot: Bot, gpu_data: GpuData, lang: Lang,
                  rich: RichReplies | None = None) -> None:
    try:
        text = render_gpus(gpu_data, lang, HTML)
        report = gpus_report(gpu_data, lang)
    except Exception:  # a broken data file must not leave the user without an answer
        log.exception("could not render the GPU catalog")
        await reply_html(message, escape(t("feature_unavailable", lang)))
        return
    await send_report(bot, target_of(message), report, text, lang=lang, rich=rich)
