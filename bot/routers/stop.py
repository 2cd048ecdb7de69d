"""Stopping an answer: /stop (all of mine), the draft's stop button in a private chat, «Стоп» in groups.

The draft's button comes back as a ``stopped_message_generation`` update (Bot API 10.3) with the chat and
the draft's id; the group button's callback data carries the same id and the asker. Either finds the
generation in :class:`bot.delivery.generations.Generations` and cancels that one answer: the model stops, the slot
is freed, and the verified part already shown is sent as the final message, marked as stopped.
"""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Message, MessageGenerationStopped

from bot.delivery.generations import Generations
from bot.output.notices import Notices
from bot.output.streaming import reply_html
from bot.ui.callbacks import StopAnswer
from infra.i18n import Lang, t
from infra.markup import escape
from rag.answering.answerer import Answerer

router = Router(name=__name__)


@router.message(Command("stop"))
async def on_stop(message: Message, answerer: Answerer | None, lang: Lang) -> None:
    stopped = 0
    if answerer is not None and message.from_user is not None:
        stopped = answerer.cancel(str(message.from_user.id))
    await reply_html(message, escape(t("stop_done" if stopped else "stop_nothing", lang)))


@router.stopped_message_generation()
async def on_draft_stopped(event: MessageGenerationStopped, answerer: Answerer | None = None,
                           generations: Generations | None = None) -> None:
    # Nothing to say back: the stopped answer itself arrives as the final message, marked as stopped.
    if generations is not None:
        generations.stop(event.chat.id, event.draft_id, answerer)


@router.callback_query(StopAnswer.filter())
async def on_stop_button(query: CallbackQuery, callback_data: StopAnswer, lang: Lang,
                         answerer: Answerer | None = None, generations: Generations | None = None,
                         notices: Notices | None = None) -> None:
    if query.from_user.id != callback_data.u:
        await (notices or Notices()).to_presser(query, t("stop_not_yours", lang))
        return
    chat_id = query.message.chat.id if query.message is not None else query.from_user.id
    if generations is None or generations.stop(chat_id, callback_data.g, answerer) is None:
        await query.answer(t("stop_finished", lang))
        return
    await query.answer(t("stop_done", lang))
