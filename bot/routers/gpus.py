"""/gpus: the GPU catalog with memory and the on-demand price (from the price list's one owner)."""

from __future__ import annotations

import logging

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import Message

from app.views.gpus import render_gpus
from bot.streaming import reply_html
from gpu.data import GpuData
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)
router = Router(name=__name__)


@router.message(Command("gpus"))
async def on_gpus(message: Message, gpu_data: GpuData, lang: Lang) -> None:
    try:
        text = render_gpus(gpu_data, lang, HTML)
    except Exception:  # a broken data file must not leave the user without an answer
        log.exception("could not render the GPU catalog")
        text = escape(t("feature_unavailable", lang))
    await reply_html(message, text)
