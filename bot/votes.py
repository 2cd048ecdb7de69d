"""The vote buttons under an answer (👍 / 👎 / «неверно»): what the ask router and the answer-job sweeper
attach, and the feedback router (:mod:`bot.routers.feedback`) handles."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from app.gaps.log import VOTES
from infra.i18n import Lang, t


class VoteButton(CallbackData, prefix="fb"):
    answer: str  # the answer record id (32 hex characters)
    vote: str  # up | down | wrong


def feedback_keyboard(answer_id: str, lang: Lang) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[
        InlineKeyboardButton(text=t(f"feedback_{vote}", lang), callback_data=VoteButton(answer=answer_id,
                                                                                       vote=vote).pack())
        for vote in VOTES]])
