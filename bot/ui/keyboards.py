"""Inline keyboards: the ones one router draws and another handles, and the guided /quote flow's.

Every button goes through :func:`button`, which packs its :mod:`bot.ui.callbacks` data and checks it
fits the Bot API's 64 bytes.
"""

from __future__ import annotations

import datetime as dt

from aiogram.enums import ButtonStyle
from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from app.gaps.log import VOTES
from app.reply import ClarifyReply
from app.views.quote import number, pricing_label
from bot.ui.callbacks import (
    MAX_CALLBACK_BYTES,
    ClarifyButton,
    FlowButton,
    FlowStep,
    PlacementAction,
    QuoteItButton,
    RentButton,
    RentConfirm,
    StopAnswer,
    VoteButton,
)
from gpu.fit.engine import FitResult
from gpu.placements.engine import EXPIRED, RUNNING, Placement
from gpu.quote.duration import Duration
from gpu.quote.request import Pricing
from gpu.quote.service import QuoteService
from infra.i18n import Lang, t

COUNT_CHOICES = (1, 2, 4, 8, 16, 32, 64)
DURATION_CHOICES_HOURS = (24, 168, 336, 720, 2160)


def fits(data: CallbackData) -> bool:
    return len(data.pack().encode()) <= MAX_CALLBACK_BYTES


def button(text: str, data: CallbackData, style: ButtonStyle | None = None) -> InlineKeyboardButton:
    packed = data.pack()
    assert len(packed.encode()) <= MAX_CALLBACK_BYTES, packed
    return InlineKeyboardButton(text=text, callback_data=packed, style=style)


# ---- answers -------------------------------------------------------------------------------------------
def feedback_keyboard(answer_id: str, lang: Lang) -> InlineKeyboardMarkup:
    """👍 / 👎 / «неверно» under an answer (the ask router and the answer-job sweeper attach it)."""
    return InlineKeyboardMarkup(inline_keyboard=[[
        InlineKeyboardButton(text=t(f"feedback_{vote}", lang), callback_data=VoteButton(answer=answer_id,
                                                                                       vote=vote).pack())
        for vote in VOTES]])


def stop_keyboard(draft_id: int, user_id: int, lang: Lang) -> InlineKeyboardMarkup:
    """«Стоп» under a group answer being generated."""
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(
        text=t("stop_button", lang), callback_data=StopAnswer(g=draft_id, u=user_id).pack(),
        style=ButtonStyle.DANGER)]])


def clarify_keyboard(reply: ClarifyReply) -> InlineKeyboardMarkup | None:
    """A button per common answer to a clarifying question, two a row (one too long for the Bot API is left
    out)."""
    rows: list[list[InlineKeyboardButton]] = []
    row: list[InlineKeyboardButton] = []
    for option in reply.options:
        data = ClarifyButton(value=option.value)
        if not fits(data):
            continue
        row.append(InlineKeyboardButton(text=option.label, callback_data=data.pack()))
        if len(row) == 2:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None


# ---- /fit ----------------------------------------------------------------------------------------------
def fit_quote_buttons(result: FitResult, lang: Lang) -> InlineKeyboardMarkup | None:
    """"Quote it" for the GPU asked about (when it fits and is rented here) and the cheapest that fits."""
    configs: list[tuple[str, int]] = []
    if result.fits and result.gpu_was_given and result.rentable:  # a GPU not rented here has no quote
        configs.append((result.gpu.id, result.request.gpu_count))
    if result.cheapest:
        configs.append((result.cheapest[0].gpu_id, result.cheapest[0].count))
    rows = []
    for gpu_id, count in dict.fromkeys(configs):
        data = QuoteItButton(gpu=gpu_id, count=count)
        if fits(data):
            rows.append([InlineKeyboardButton(text=t("fit_button_quote", lang, count=count, gpu=gpu_id),
                                              callback_data=data.pack())])
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None


# ---- the guided /quote flow ----------------------------------------------------------------------------
def _flow_keyboard(buttons: list[InlineKeyboardButton], per_row: int, lang: Lang) -> InlineKeyboardMarkup:
    rows = [buttons[i:i + per_row] for i in range(0, len(buttons), per_row)]
    rows.append([button(t("quote_btn_cancel", lang), FlowButton(step=FlowStep.CANCEL))])
    return InlineKeyboardMarkup(inline_keyboard=rows)


def flow_gpu_keyboard(quotes: QuoteService, lang: Lang) -> InlineKeyboardMarkup:
    prices = quotes.prices()
    buttons = []
    for gpu_id in quotes.rentable_gpu_ids():
        price = prices.gpus[gpu_id]
        label = f"{quotes.catalog.get(gpu_id).name.split(' ', 1)[-1]} · {number(price.on_demand, lang)}"
        buttons.append(button(label, FlowButton(step=FlowStep.GPU, value=gpu_id)))
    return _flow_keyboard(buttons, 2, lang)


def flow_count_keyboard(quotes: QuoteService, lang: Lang) -> InlineKeyboardMarkup:
    limit = quotes.prices().max_gpus_per_quote
    return _flow_keyboard([button(str(n), FlowButton(step=FlowStep.COUNT, value=str(n)))
                           for n in COUNT_CHOICES if n <= limit], 4, lang)


def flow_duration_keyboard(lang: Lang) -> InlineKeyboardMarkup:
    return _flow_keyboard([button(Duration.of_hours(h).describe(lang), FlowButton(step=FlowStep.DURATION,
                                                                                  value=str(h)))
                           for h in DURATION_CHOICES_HOURS], 3, lang)


def flow_pricing_keyboard(quotes: QuoteService, gpu_id: str, lang: Lang) -> InlineKeyboardMarkup:
    choices = [p for p in Pricing if p is not Pricing.SPOT or quotes.offers_spot(gpu_id)]
    return _flow_keyboard([button(pricing_label(p.value, lang), FlowButton(step=FlowStep.PRICING, value=p.value))
                           for p in choices], 1, lang)


def flow_confirm_keyboard(lang: Lang) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[
        button(t("quote_btn_confirm", lang), FlowButton(step=FlowStep.CONFIRM)),
        button(t("quote_btn_cancel", lang), FlowButton(step=FlowStep.CANCEL))]])


# ---- placements (drawn under a quote and by /placements) -----------------------------------------------
def rent_keyboard(quote_id: str, lang: Lang) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[button(t("tgp_btn_rent", lang), RentButton(quote=quote_id),
                                                         ButtonStyle.PRIMARY)]])


def rent_confirm_keyboard(quote_id: str, lang: Lang) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[
        button(t("tgp_btn_confirm", lang), RentConfirm(ok=1, quote=quote_id), ButtonStyle.SUCCESS),
        button(t("tgp_btn_cancel", lang), RentConfirm(ok=0, quote=quote_id))]])


def stop_confirm_keyboard(placement: Placement, lang: Lang) -> InlineKeyboardMarkup:
    pid, v = placement.id, placement.version
    return InlineKeyboardMarkup(inline_keyboard=[[
        button(t("tgp_btn_stop_confirm", lang), PlacementAction(act="stopok", pid=pid, v=v), ButtonStyle.DANGER),
        button(t("tgp_btn_cancel", lang), PlacementAction(act="no", pid=pid, v=v))]])


def placement_row(placement: Placement, now: dt.datetime, lang: Lang) -> list[InlineKeyboardButton]:
    """Stop or start, and +1 week / +1 month for a committed one; nothing once the paid period is over."""
    status = placement.status(now)
    if status == EXPIRED:
        return []
    pid, v, short = placement.id, placement.version, placement.id[-4:]
    row = [button(t("tgp_btn_stop", lang, short=short), PlacementAction(act="stop", pid=pid, v=v),
                  ButtonStyle.DANGER) if status == RUNNING
           else button(t("tgp_btn_start", lang, short=short), PlacementAction(act="start", pid=pid, v=v))]
    if placement.committed:
        row += [button(t("tgp_btn_week", lang), PlacementAction(act="week", pid=pid, v=v)),
                button(t("tgp_btn_month", lang), PlacementAction(act="month", pid=pid, v=v))]
    return row


def placements_keyboard(placements: list[Placement], now: dt.datetime, lang: Lang) -> InlineKeyboardMarkup | None:
    rows = [row for row in (placement_row(p, now, lang) for p in placements) if row]
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None
