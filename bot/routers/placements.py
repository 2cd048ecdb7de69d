"""Placements in Telegram: «Арендовать» under a quote, /placements with stop / start / extend buttons.

Ownership: in a private chat the owner is the user (``tg:<user>``, like quotes); in a group the chat
(``tg-chat:<chat>``): every member lists its placements, only its administrators (getChatMember: creator
or administrator) rent, stop, start or extend; the others get a polite alert. Another owner's placement
reads "not found", like a wrong id (the service scopes every lookup to the owner).

Idempotency: confirming a rent or a stop uses a key derived from the confirmation message
(``tg:<chat>:<message>:rent``), so a double tap replays; start and extend buttons carry the placement's
version, which is part of their key, and a button drawn for an older version is out of date.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from aiogram import Bot, Router
from aiogram.enums import ChatMemberStatus, ChatType
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest
from aiogram.filters import Command
from aiogram.types import CallbackQuery, Chat, InlineKeyboardMarkup, Message
from sqlalchemy.exc import SQLAlchemyError

from app.views.placements import placements_report, render_placement_error, render_placements, render_result
from app.views.quote import money, pricing_label
from bot.faultpoints import crash_point
from bot.middlewares.turns import FlowTurnMiddleware
from bot.output.notices import Notices
from bot.output.rich import RichReplies, send_report
from bot.output.streaming import target_of
from bot.ui.callbacks import PlacementAction, RentButton, RentConfirm
from bot.ui.keyboards import placement_row, placements_keyboard, rent_confirm_keyboard, stop_confirm_keyboard
from gpu.placements.engine import COMMITTED, PlacementStateError
from gpu.placements.service import PlacementConflictError, PlacementResult, PlacementService
from gpu.placements.store import PlacementNotFoundError
from gpu.quote.request import QuoteInputError
from gpu.quote.service import QuoteService
from infra.i18n import Lang, t
from infra.markup import HTML, escape
from infra.settings import Settings

log = logging.getLogger(__name__)
router = Router(name=__name__)
router.callback_query.outer_middleware(FlowTurnMiddleware())  # one button of a chat+user at a time

ADMIN_STATUSES = {ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.CREATOR}
EXTENSIONS = {"week": "1 week", "month": "1 month"}
REFUSALS = (PlacementNotFoundError, PlacementStateError, PlacementConflictError, QuoteInputError)
LIST_LIMIT = 10


@dataclass(frozen=True)
class Who:
    """Whose placements a chat sees (``owner``) and who is acting (``actor``, for the audit trail)."""

    owner: str
    actor: str
    group: bool


def who_in(chat: Chat, user_id: int) -> Who:
    group = chat.type != ChatType.PRIVATE
    return Who(owner=f"tg-chat:{chat.id}" if group else f"tg:{user_id}", actor=f"tg:{user_id}", group=group)


async def may_control(bot: Bot, chat: Chat, user_id: int) -> bool:
    """In a private chat always; in a group only the chat's creator and administrators."""
    if chat.type == ChatType.PRIVATE:
        return True
    try:
        member = await bot.get_chat_member(chat.id, user_id)
    except TelegramAPIError as exc:  # cannot tell: refuse rather than let anyone act for the chat
        log.warning("getChatMember failed for chat %s: %s", chat.id, exc)
        return False
    return member.status in ADMIN_STATUSES


async def _edit(message: Message, text: str, markup: InlineKeyboardMarkup | None) -> None:
    """Edit, tolerating "message is not modified" (a replay draws the same text again)."""
    with contextlib.suppress(TelegramBadRequest):
        await message.edit_text(text, reply_markup=markup)


async def _refuse(callback: CallbackQuery, exc: Exception, lang: Lang) -> None:
    await callback.answer(render_placement_error(exc, lang)[:200], show_alert=True)


async def _unavailable(callback: CallbackQuery, lang: Lang) -> None:
    log.exception("placement store failed")
    await callback.answer(t("tgp_unavailable", lang), show_alert=True)


async def _controlling(callback: CallbackQuery, bot: Bot, lang: Lang) -> tuple[Message, Who] | None:
    """The button's message and whose placements it acts on, or None after answering a refusal."""
    message = callback.message
    if not isinstance(message, Message):
        await callback.answer(t("tgp_stale", lang))
        return None
    if not await may_control(bot, message.chat, callback.from_user.id):
        # a button's notice never needs the chat's refusal memory: its callback_query_id makes it eligible
        await Notices().to_presser(callback, t("tgp_admin_only", lang))
        return None
    return message, who_in(message.chat, callback.from_user.id)


def _result_text(result: PlacementResult, lang: Lang) -> str:
    text = render_result(result, lang, HTML)
    if result.operation == "stop":
        text += "\n" + escape(t("tgp_stop_rule", lang))
    return text


def _row_markup(result: PlacementResult, lang: Lang) -> InlineKeyboardMarkup | None:
    row = placement_row(result.placement, result.as_of, lang)
    return InlineKeyboardMarkup(inline_keyboard=[row]) if row else None


# ---- renting from a quote ------------------------------------------------------------------------------
@router.callback_query(RentButton.filter())
async def on_rent(callback: CallbackQuery, callback_data: RentButton, bot: Bot, quotes: QuoteService,
                  placements: PlacementService, lang: Lang) -> None:
    controlled = await _controlling(callback, bot, lang)
    if controlled is None:
        return
    message, _ = controlled
    quote_id = callback_data.quote.strip().upper()
    try:
        issued = await quotes.get(quote_id) if quote_id.startswith("Q-") and len(quote_id) <= 32 else None
    except (SQLAlchemyError, OSError):
        await _unavailable(callback, lang)
        return
    if issued is None or issued.owner != f"tg:{callback.from_user.id}":  # another's quote reads as missing
        await _refuse(callback, PlacementNotFoundError(quote_id[:32]), lang)
        return
    quote = issued.quote
    if placements.clock() > quote.valid_until:
        await _refuse(callback, PlacementStateError("quote expired", "quote_expired",
                                                    valid_until=quote.valid_until), lang)
        return
    term = quote.duration.describe(lang)
    text = t("tgp_rent_confirm", lang, gpu=quote.gpu_name, count=quote.gpu_count,
             pricing=pricing_label(quote.pricing, lang), term=term, total=money(quote.total, quote.currency, lang))
    rule = t("tgp_rent_confirm_committed" if quote.pricing == COMMITTED else "tgp_rent_confirm_hourly", lang,
             term=term)
    await message.answer(escape(text) + "\n" + escape(rule), reply_markup=rent_confirm_keyboard(quote_id, lang))
    await callback.answer()


@router.callback_query(RentConfirm.filter())
async def on_rent_confirm(callback: CallbackQuery, callback_data: RentConfirm, bot: Bot,
                          placements: PlacementService, settings: Settings, lang: Lang) -> None:
    controlled = await _controlling(callback, bot, lang)
    if controlled is None:
        return
    message, who = controlled
    if not callback_data.ok:
        await _edit(message, escape(t("tgp_rent_cancelled", lang)), None)
        await callback.answer()
        return
    key = f"tg:{message.chat.id}:{message.message_id}:rent"
    try:
        result = await placements.rent_quote(callback_data.quote, owner=who.owner, key=key, actor=who.actor,
                                             quote_owner=who.actor)
    except REFUSALS as exc:
        await _refuse(callback, exc, lang)
        return
    except (SQLAlchemyError, OSError):
        await _unavailable(callback, lang)
        return
    crash_point(settings, "placement_stored")  # test-only, see bot/faultpoints.py
    # a replay draws the same result again (harmless if it is already there)
    await _edit(message, _result_text(result, lang), _row_markup(result, lang))
    await callback.answer(t("tgp_already_done", lang) if result.replayed else None)


# ---- /placements and its buttons -----------------------------------------------------------------------
@router.message(Command("placements"))
async def on_placements(message: Message, bot: Bot, placements: PlacementService, lang: Lang,
                        rich: RichReplies | None = None) -> None:
    user_id = message.from_user.id if message.from_user else message.chat.id
    who = who_in(message.chat, user_id)
    try:
        owned = await placements.owned(who.owner, limit=LIST_LIMIT)
    except (SQLAlchemyError, OSError):
        log.exception("placement store failed")
        await message.answer(escape(t("tgp_unavailable", lang)))
        return
    now = placements.clock()
    text = render_placements(owned, now, lang, HTML)
    note = t("tgp_placements_chat", lang) if who.group and owned else None
    if note is not None:
        text += "\n" + escape(note)
    report = placements_report(owned, now, lang, note)
    markup = placements_keyboard(owned, now, lang)
    if report is None:  # nothing to list: one sentence
        await message.answer(text, reply_markup=markup)
        return
    await send_report(bot, target_of(message), report, text, lang=lang, rich=rich, reply_markup=markup,
                      reply=False)


@router.callback_query(PlacementAction.filter())
async def on_placement_action(callback: CallbackQuery, callback_data: PlacementAction, bot: Bot,
                              placements: PlacementService, lang: Lang) -> None:
    controlled = await _controlling(callback, bot, lang)
    if controlled is None:
        return
    message, who = controlled
    act, pid = callback_data.act, callback_data.pid
    try:
        if act == "no":
            await _edit(message, escape(t("tgp_stop_cancelled", lang)), None)
            await callback.answer()
            return
        if act == "stop":  # ask first, stating the rule
            current = await placements.get(pid, owner=who.owner)
            if current.paid_until is not None:
                period = t("tgp_stop_period_committed", lang,
                           paid_until=current.paid_until.strftime("%Y-%m-%d %H:%M"))
            else:
                period = t("tgp_stop_period_hourly", lang)
            text = t("tgp_stop_confirm", lang, placement_id=current.id, gpu=current.gpu_name,
                     count=current.gpu_count, period=period)
            await message.answer(escape(text), reply_markup=stop_confirm_keyboard(current, lang))
            await callback.answer()
            return
        if act == "stopok":
            result = await placements.stop(pid, owner=who.owner, actor=who.actor,
                                           key=f"tg:{message.chat.id}:{message.message_id}:stop")
            await _edit(message, _result_text(result, lang), _row_markup(result, lang))
            await callback.answer(t("tgp_already_done", lang) if result.replayed else None)
            return
        if act not in {"start", *EXTENSIONS}:
            await callback.answer(t("tgp_stale", lang))
            return
        key = f"tg:{message.chat.id}:{pid}:v{callback_data.v}:{act}"
        current = await placements.get(pid, owner=who.owner)
        if current.version != callback_data.v:  # drawn for an older state (or a second tap that lost)
            await callback.answer(t("tgp_stale", lang), show_alert=True)
            return
        if act == "start":
            result = await placements.start(pid, owner=who.owner, actor=who.actor, key=key)
        else:
            result = await placements.extend(pid, EXTENSIONS[act], owner=who.owner, actor=who.actor, key=key)
    except REFUSALS as exc:
        await _refuse(callback, exc, lang)
        return
    except (SQLAlchemyError, OSError):
        await _unavailable(callback, lang)
        return
    if result.replayed:
        await callback.answer(t("tgp_already_done", lang))
        return
    await message.answer(_result_text(result, lang), reply_markup=_row_markup(result, lang))
    await callback.answer()
