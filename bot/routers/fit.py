"""/fit: will a model fit in VRAM — a readable breakdown, a chart, and a "quote it" button.

* ``/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k`` anywhere; VRAM questions in plain text
  ("влезет ли mixtral в две A100?") are recognised by the intent classifier and sent here by ``ask``.
* a ``config.json`` or the head of a ``.gguf`` file sent as a document (captioned ``/fit …`` in groups)
  describes any other model.
* the reply itself (tables, chart, the "quote it" buttons) is :func:`bot.output.fit_reply.send_fit`; the
  "quote it" button is a :class:`bot.ui.callbacks.QuoteItButton`, handled by the /quote router.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import tempfile
from pathlib import Path

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from app.views.fit import render_error
from bot.filters import Sync
from bot.output.fit_reply import send_fit
from bot.output.rich import RichReplies
from bot.output.streaming import reply_html
from gpu.fit.architectures import ModelInputError, ModelSpec, model_from_gguf, model_from_hf_config
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)
router = Router(name=__name__)

MAX_UPLOAD_BYTES = 20 * 2**20  # the Bot API's download limit


@router.message(Command("fit"))
async def on_fit(message: Message, command: CommandObject, bot: Bot, lang: Lang, fit: FitService,
                 rich: RichReplies | None = None) -> None:
    if _is_model_file(message):  # "/fit …" as the caption of an uploaded config.json / .gguf
        await on_model_file(message, bot, lang, fit, rich)
        return
    text = (command.args or "").strip()
    if not text:
        await reply_html(message, escape(t("fit_usage", lang)))
        return
    await send_fit(message, bot, fit, text, lang, rich=rich)


def _is_model_file(message: Message) -> bool:
    document = message.document
    if document is None or not document.file_name:
        return False
    name = document.file_name.lower()
    caption = (message.caption or "").strip().lower()
    addressed = message.chat.type == ChatType.PRIVATE or caption.startswith("/fit")
    return addressed and (name.endswith(".json") or name.endswith(".gguf"))


@router.message(Sync(F.document), Sync(_is_model_file))
async def on_model_file(message: Message, bot: Bot, lang: Lang, fit: FitService,
                        rich: RichReplies | None = None) -> None:
    document = message.document
    assert document is not None and document.file_name is not None
    if document.file_size and document.file_size > MAX_UPLOAD_BYTES:
        await reply_html(message, escape(t("fit_file_too_big", lang, size=document.file_size // 2**20,
                                           limit=MAX_UPLOAD_BYTES // 2**20)))
        return
    caption = re.sub(r"^/fit(@\w+)?", "", (message.caption or "").strip()).strip()
    buffer = io.BytesIO()
    try:
        await bot.download(document, destination=buffer)
        raw = buffer.getvalue()
        if document.file_name.lower().endswith(".gguf"):
            model = await asyncio.to_thread(_gguf_from_bytes, raw, document.file_name)
        else:
            model = model_from_hf_config(raw, document.file_name)
    except ModelInputError as exc:
        await reply_html(message, render_error(FitInputError(exc.phrase.key, **exc.phrase.params), lang, HTML))
        return
    except Exception:
        log.exception("could not download %s", document.file_name)
        await reply_html(message, escape(t("fit_error", lang, error=document.file_name)))
        return
    await send_fit(message, bot, fit, caption, lang, model=model, rich=rich)


def _gguf_from_bytes(raw: bytes, name: str) -> ModelSpec:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(name).name
        path.write_bytes(raw)
        return model_from_gguf(path)
