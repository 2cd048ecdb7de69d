"""/fit: will a model fit in VRAM — a readable breakdown, a chart, and a "quote it" button.

* ``/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k`` anywhere; VRAM questions in plain text
  ("влезет ли mixtral в две A100?") are recognised by the intent classifier and sent here by ``ask``.
* a ``config.json`` or the head of a ``.gguf`` file sent as a document (captioned ``/fit …`` in groups)
  describes any other model.
* the "quote it" button is a :class:`bot.routers.quote.QuoteItButton`, handled by the /quote router.
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
from aiogram.exceptions import AiogramError
from aiogram.filters import Command, CommandObject
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, Message

from app.views.fit import fit_report, render, render_error
from bot.charts import CAPTION_LIMIT, CHART_PHOTOS
from bot.filters import Sync
from bot.rendering import strip_tags, utf16_len
from bot.rich import RichReplies, try_rich
from bot.routers.quote import QuoteItButton
from bot.streaming import Target, reply_html, target_of
from gpu.fit.architectures import ModelInputError, ModelSpec, model_from_gguf, model_from_hf_config
from gpu.fit.engine import FitResult
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)
router = Router(name=__name__)

MAX_UPLOAD_BYTES = 20 * 2**20  # the Bot API's download limit


def quote_buttons(result: FitResult, lang: Lang) -> InlineKeyboardMarkup | None:
    configs: list[tuple[str, int]] = []
    if result.fits and result.gpu_was_given and result.rentable:  # a GPU not rented here has no quote
        configs.append((result.gpu.id, result.request.gpu_count))
    if result.cheapest:
        configs.append((result.cheapest[0].gpu_id, result.cheapest[0].count))
    rows = []
    for gpu_id, count in dict.fromkeys(configs):
        data = QuoteItButton(gpu=gpu_id, count=count).pack()
        if len(data.encode()) <= 64:
            rows.append([InlineKeyboardButton(text=t("fit_button_quote", lang, count=count, gpu=gpu_id),
                                              callback_data=data)])
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None


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
    markup = quote_buttons(result, lang)
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
