"""Callback data and keyboards of placements in Telegram (shared by the quote and placements routers)."""

from __future__ import annotations

import datetime as dt

from aiogram.enums import ButtonStyle
from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from gpu.placements.engine import EXPIRED, RUNNING, Placement
from infra.i18n import Lang, t

MAX_CALLBACK_BYTES = 64


class RentButton(CallbackData, prefix="rent"):
    """«Арендовать» under an issued quote: asks for a confirmation first."""

    quote: str


class RentConfirm(CallbackData, prefix="rentc"):
    """Confirm (ok=1) or cancel (ok=0) a rent; the confirmation message's id is the idempotency key."""

    ok: int
    quote: str


class PlacementAction(CallbackData, prefix="pl"):
    """A placement's button: stop (asks first), stopok, no (cancel the stop), start, week, month.

    ``v`` is the placement's version the button was drawn for: start / extend of an older version is out
    of date (the placement changed since), and the version is part of their idempotency key.
    """

    act: str
    pid: str
    v: int


def button(text: str, data: CallbackData, style: ButtonStyle | None = None) -> InlineKeyboardButton:
    packed = data.pack()
    assert len(packed.encode()) <= MAX_CALLBACK_BYTES, packed
    return InlineKeyboardButton(text=text, callback_data=packed, style=style)


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
