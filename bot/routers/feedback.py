"""👍 / 👎 / «неверно» under every glossary answer, and the optional one-line reason of «неверно».

The answer was recorded (:class:`app.gaps.log.FeedbackStore`) when it was sent; the buttons carry its id.
A vote is one per user per answer and changeable; «неверно» then asks for a reason with a ForceReply and
waits (FSM) for the user's next line in that chat: a reply to the prompt, or in a private chat any text that
is not a command. ``/cancel`` or any other command leaves it without a reason.
"""

from __future__ import annotations

import logging

from aiogram import F, Router
from aiogram.dispatcher.event.bases import SkipHandler
from aiogram.filters import Command, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, ForceReply, Message

from app.gaps.log import VOTES, FeedbackStore
from bot.filters import Sync
from bot.output.streaming import reply_html
from bot.ui.callbacks import VoteButton
from infra.i18n import Lang, t
from infra.markup import escape

log = logging.getLogger(__name__)
router = Router(name=__name__)


class FeedbackReason(StatesGroup):
    waiting = State()


# Messages reach this router's handlers only while a reason is awaited: one state check per update, not
# one per handler (every message of every chat passes here).
router.message.filter(StateFilter(FeedbackReason.waiting))


@router.callback_query(VoteButton.filter())
async def on_vote(callback: CallbackQuery, callback_data: VoteButton, state: FSMContext,
                  feedback: FeedbackStore | None = None, lang: Lang = "ru") -> None:
    vote = callback_data.vote
    if feedback is None or vote not in VOTES:
        await callback.answer(t("feedback_expired", lang))
        return
    try:
        known = await feedback.vote(callback_data.answer, callback.from_user.id, vote)
    except Exception:
        log.exception("could not store a vote")
        known = False
    if not known:
        await callback.answer(t("feedback_expired", lang))
        return
    await callback.answer(t("feedback_thanks_up" if vote == "up" else "feedback_thanks_down", lang))
    if vote == "wrong" and callback.message is not None and isinstance(callback.message, Message):
        # waiting before the prompt is out: the user's reply may arrive before this handler resumes
        await state.set_state(FeedbackReason.waiting)
        await state.update_data(feedback_answer=callback_data.answer)
        prompt = await callback.message.answer(
            escape(t("feedback_ask_reason", lang)),
            reply_markup=ForceReply(force_reply=True,
                                    input_field_placeholder=t("feedback_reason_placeholder", lang)))
        await state.update_data(feedback_prompt=prompt.message_id)


@router.message(Command("cancel"))
async def on_reason_cancelled(message: Message, state: FSMContext, lang: Lang = "ru") -> None:
    await state.clear()
    await reply_html(message, escape(t("feedback_reason_cancelled", lang)))


@router.message(Sync(F.text.startswith("/")))
async def on_other_command(message: Message, state: FSMContext) -> None:
    await state.clear()  # another command: no reason after all; the command is handled as usual
    raise SkipHandler


@router.message(Sync(F.text))
async def on_reason(message: Message, state: FSMContext, feedback: FeedbackStore | None = None,
                    lang: Lang = "ru") -> None:
    data = await state.get_data()
    replied = message.reply_to_message
    if message.chat.type != "private" and (replied is None or replied.message_id != data.get("feedback_prompt")):
        raise SkipHandler  # in a group only the reply to the prompt is the reason; this is an ordinary message
    await state.clear()
    if feedback is not None and message.from_user is not None and data.get("feedback_answer"):
        first_line = (message.text or "").strip().splitlines()[0] if (message.text or "").strip() else ""
        await feedback.set_reason(str(data["feedback_answer"]), message.from_user.id, first_line)
    await reply_html(message, escape(t("feedback_reason_saved", lang)))
