"""/quote (one line or a guided flow with inline keyboards) and /quotes.

* ``/quote h100 x8 2 weeks`` answers at once. Its idempotency key defaults to ``tg:<chat>:<message>``, so
  a redelivered update replays the same quote and an edited message cannot create a second one;
  ``key=…`` in the text overrides it.
* bare ``/quote`` walks through GPU → count → duration → pricing → confirm. The step and the choices live
  in the FSM storage (database or Redis), so the flow survives a restart. Confirming uses the key
  ``tg:<chat>:<flow message>``: a double tap replays instead of quoting twice.
* ``quote:{gpu_id}:{count}`` (the /fit "quote it" button) enters the flow at the duration step.
* callback data is at most 64 bytes; anything forged or stale gets a polite answer, never a crash.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from decimal import Decimal, InvalidOperation
from typing import Any

from aiogram import Bot, F, Router
from aiogram.filters import Command, CommandObject, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from sqlalchemy.exc import SQLAlchemyError

from anchorgpu.services import Services
from anchorgpu.texts import Lang, t
from bot.faultpoints import crash_point
from bot.filters import Sync
from bot.rendering import escape
from gpu.quote.duration import Duration, Unit
from gpu.quote.render import (
    number,
    pricing_label,
    render_conflict,
    render_input_error,
    render_issued,
    render_quote,
    render_recent,
)
from gpu.quote.request import Pricing, QuoteInputError, QuoteRequest, parse_duration_or_error, split_key
from gpu.quote.service import QuoteService
from gpu.quote.store import IdempotencyConflictError

log = logging.getLogger(__name__)
router = Router(name=__name__)

COUNT_CHOICES = (1, 2, 4, 8, 16, 32, 64)
DURATION_CHOICES_HOURS = (24, 168, 336, 720, 2160)
MAX_CALLBACK_BYTES = 64


class QuoteFlow(StatesGroup):
    gpu = State()
    count = State()
    duration = State()
    pricing = State()
    confirm = State()


# A button pressed right after the bot sent it can arrive before the handler that sent it has saved the
# step (updates are handled concurrently). Flow handlers of one chat+user therefore take turns; the lock is
# per process and only orders the flow's own steps (idempotency never relies on it: see gpu.quote.store).
_flow_locks: weakref.WeakValueDictionary[tuple[int, int], asyncio.Lock] = weakref.WeakValueDictionary()


@asynccontextmanager
async def _flow_turn(chat_id: int, user_id: int) -> AsyncIterator[None]:
    key = (chat_id, user_id)
    lock = _flow_locks.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _flow_locks[key] = lock
    async with lock:
        yield


def _callback_chat(callback: CallbackQuery) -> int:
    return callback.message.chat.id if callback.message is not None else callback.from_user.id


def owner_of(user_id: int) -> str:
    return f"tg:{user_id}"


def message_key(chat_id: int, message_id: int) -> str:
    """The default idempotency key: one Telegram message can produce at most one quote."""
    return f"tg:{chat_id}:{message_id}"


def _quotes(services: Services | None) -> QuoteService | None:
    return services.quotes if services is not None else None


def _button(text: str, data: str) -> InlineKeyboardButton:
    assert len(data.encode()) <= MAX_CALLBACK_BYTES, data
    return InlineKeyboardButton(text=text, callback_data=data)


def _keyboard(buttons: list[InlineKeyboardButton], per_row: int, lang: Lang) -> InlineKeyboardMarkup:
    rows = [buttons[i:i + per_row] for i in range(0, len(buttons), per_row)]
    rows.append([_button(t("quote_btn_cancel", lang), "qf:x")])
    return InlineKeyboardMarkup(inline_keyboard=rows)


# ---- one-line /quote ---------------------------------------------------------------------------------
@router.message(Command("quote"))
@router.edited_message(Command("quote"))
async def on_quote(message: Message, command: CommandObject, state: FSMContext, lang: Lang = "ru",
                   services: Services | None = None) -> None:
    quotes = _quotes(services)
    if quotes is None:
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    text = (command.args or "").strip()
    if not text:
        if message.edit_date is None:  # an edited bare /quote is not a new request
            await _start_flow(message, state, quotes, lang)
        return
    user_id = message.from_user.id if message.from_user else message.chat.id
    _, explicit_key = split_key(text)
    derived = explicit_key is None
    key = message_key(message.chat.id, message.message_id) if derived else None
    try:
        issued = await quotes.quote_text(text, owner=owner_of(user_id), key=key)
    except QuoteInputError as exc:
        await message.answer(render_input_error(exc, lang, html=True) + "\n\n" + escape(t("quote_usage", lang)))
        return
    except IdempotencyConflictError as exc:
        await message.answer(render_conflict(exc, lang, html=True, edited=derived))
        return
    except (SQLAlchemyError, OSError):  # OSError: the database refused the connection
        log.exception("quote store failed")
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    crash_point(services.settings if services else None, "quote_stored")  # test-only, see bot/faultpoints.py
    await message.answer(render_issued(issued, lang, html=True))


@router.message(Command("quotes"))
async def on_quotes(message: Message, lang: Lang = "ru", services: Services | None = None) -> None:
    quotes = _quotes(services)
    if quotes is None:
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    user_id = message.from_user.id if message.from_user else message.chat.id
    try:
        recent = await quotes.recent(owner_of(user_id), limit=10)
    except (SQLAlchemyError, OSError):
        log.exception("quote store failed")
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    await message.answer(render_recent(recent, lang, html=True))


# ---- guided flow -------------------------------------------------------------------------------------
def _gpu_keyboard(quotes: QuoteService, lang: Lang) -> InlineKeyboardMarkup:
    prices = quotes.prices()
    buttons = []
    for gpu_id in quotes.rentable_gpu_ids():
        price = prices.gpus[gpu_id]
        label = f"{quotes.catalog.get(gpu_id).name.split(' ', 1)[-1]} · {number(price.on_demand, lang)}"
        buttons.append(_button(label, f"qf:g:{gpu_id}"))
    return _keyboard(buttons, 2, lang)


def _count_keyboard(quotes: QuoteService, lang: Lang) -> InlineKeyboardMarkup:
    limit = quotes.prices().max_gpus_per_quote
    return _keyboard([_button(str(n), f"qf:n:{n}") for n in COUNT_CHOICES if n <= limit], 4, lang)


def _duration_keyboard(lang: Lang) -> InlineKeyboardMarkup:
    return _keyboard([_button(Duration.of_hours(h).describe(lang), f"qf:d:{h}")
                      for h in DURATION_CHOICES_HOURS], 3, lang)


def _pricing_keyboard(quotes: QuoteService, gpu_id: str, lang: Lang) -> InlineKeyboardMarkup:
    choices = [p for p in Pricing if p is not Pricing.SPOT or quotes.offers_spot(gpu_id)]
    return _keyboard([_button(pricing_label(p.value, lang), f"qf:p:{p.value}") for p in choices], 1, lang)


def _confirm_keyboard(lang: Lang) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[_button(t("quote_btn_confirm", lang), "qf:ok"),
                                                  _button(t("quote_btn_cancel", lang), "qf:x")]])


def _gpu_name(quotes: QuoteService, data: dict[str, Any]) -> str:
    return quotes.catalog.get(str(data["gpu"])).name


def _duration_from(data: dict[str, Any]) -> Duration:
    return Duration(tuple((Decimal(amount), Unit(unit)) for amount, unit in data["duration"]))


def _duration_to(duration: Duration) -> list[list[str]]:
    return [[format(amount, "f"), unit.value] for amount, unit in duration.parts]


async def _start_flow(message: Message, state: FSMContext, quotes: QuoteService, lang: Lang) -> None:
    user_id = message.from_user.id if message.from_user else message.chat.id
    async with _flow_turn(message.chat.id, user_id):
        sent = await message.answer(escape(t("quote_flow_gpu", lang)), reply_markup=_gpu_keyboard(quotes, lang))
        await state.set_state(QuoteFlow.gpu)
        await state.set_data({"msg_id": sent.message_id})


async def _stale(callback: CallbackQuery, lang: Lang) -> None:
    await callback.answer(t("quote_flow_stale", lang), show_alert=False)


def _flow_message(callback: CallbackQuery, data: dict[str, Any]) -> Message | None:
    """The callback's message when it is the current flow message (older keyboards are stale)."""
    msg = callback.message
    if not isinstance(msg, Message) or data.get("msg_id") != msg.message_id:
        return None
    return msg


async def _edit(msg: Message, text: str, markup: InlineKeyboardMarkup | None) -> None:
    await msg.edit_text(text, reply_markup=markup)


async def on_flow_gpu(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                      services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    msg = _flow_message(callback, data)
    gpu_id = (callback.data or "").removeprefix("qf:g:")
    if quotes is None or msg is None or gpu_id not in quotes.rentable_gpu_ids():
        await _stale(callback, lang)
        return
    await state.update_data(gpu=gpu_id)
    await state.set_state(QuoteFlow.count)
    await _edit(msg, escape(t("quote_flow_count", lang, gpu=quotes.catalog.get(gpu_id).name)),
                _count_keyboard(quotes, lang))
    await callback.answer()


async def on_flow_count(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                        services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    msg = _flow_message(callback, data)
    raw = (callback.data or "").removeprefix("qf:n:")
    if quotes is None or msg is None or not raw.isdecimal() or not (
            1 <= int(raw) <= quotes.prices().max_gpus_per_quote) or "gpu" not in data:
        await _stale(callback, lang)
        return
    await state.update_data(count=int(raw))
    await state.set_state(QuoteFlow.duration)
    await _edit(msg, escape(t("quote_flow_duration", lang, gpu=_gpu_name(quotes, data), count=int(raw))),
                _duration_keyboard(lang))
    await callback.answer()


async def _to_pricing(state: FSMContext, quotes: QuoteService, duration: Duration, lang: Lang,
                      msg: Message | None, reply_to: Message | None) -> None:
    data = await state.get_data()
    await state.update_data(duration=_duration_to(duration))
    await state.set_state(QuoteFlow.pricing)
    text = escape(t("quote_flow_pricing", lang, gpu=_gpu_name(quotes, data), count=data["count"],
                    duration=duration.describe(lang)))
    markup = _pricing_keyboard(quotes, str(data["gpu"]), lang)
    if msg is not None:
        await _edit(msg, text, markup)
    elif reply_to is not None:
        sent = await reply_to.answer(text, reply_markup=markup)
        await state.update_data(msg_id=sent.message_id)


async def on_flow_duration(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                           services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    msg = _flow_message(callback, data)
    raw = (callback.data or "").removeprefix("qf:d:")
    if quotes is None or msg is None or not raw.isdecimal() or not (
            1 <= int(raw) <= quotes.prices().max_duration_days * 24) or "count" not in data:
        await _stale(callback, lang)
        return
    await _to_pricing(state, quotes, Duration.of_hours(int(raw)), lang, msg, None)
    await callback.answer()


@router.message(StateFilter(QuoteFlow.duration), Sync(F.text), Sync(~F.text.startswith("/")))
async def on_flow_typed_duration(message: Message, state: FSMContext, lang: Lang = "ru",
                                 services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    if quotes is None or "count" not in data:
        await state.clear()
        await message.answer(escape(t("quote_flow_stale", lang)))
        return
    try:
        duration = parse_duration_or_error(message.text or "")
        if duration.hours > quotes.prices().max_duration_days * 24:
            raise QuoteInputError("too long", [], "duration", "too_long",
                                  days=quotes.prices().max_duration_days)
    except QuoteInputError as exc:
        await message.answer(render_input_error(exc, lang, html=True))
        return
    user_id = message.from_user.id if message.from_user else message.chat.id
    async with _flow_turn(message.chat.id, user_id):
        await _to_pricing(state, quotes, duration, lang, None, message)


def _request_from(data: dict[str, Any]) -> QuoteRequest:
    return QuoteRequest(gpu_id=str(data["gpu"]), gpu_count=int(data["count"]), duration=_duration_from(data),
                        pricing=Pricing(str(data["pricing"])))


async def on_flow_pricing(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                          services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    msg = _flow_message(callback, data)
    raw = (callback.data or "").removeprefix("qf:p:")
    if quotes is None or msg is None or raw not in {p.value for p in Pricing} or "duration" not in data:
        await _stale(callback, lang)
        return
    data["pricing"] = raw
    try:
        preview = quotes.preview(_request_from(data))
    except (QuoteInputError, KeyError, ValueError, InvalidOperation) as exc:
        text = render_input_error(exc, lang, html=False) if isinstance(exc, QuoteInputError) else ""
        await callback.answer(text[:190] or t("quote_flow_stale", lang), show_alert=True)
        return
    await state.update_data(pricing=raw)
    await state.set_state(QuoteFlow.confirm)
    text = render_quote(preview, lang, html=True) + "\n\n" + escape(t("quote_flow_confirm", lang))
    await _edit(msg, text, _confirm_keyboard(lang))
    await callback.answer()


async def on_flow_confirm(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                          services: Services | None = None) -> None:
    quotes = _quotes(services)
    data = await state.get_data()
    msg = _flow_message(callback, data)
    if quotes is None or msg is None or "pricing" not in data:
        await _stale(callback, lang)
        return
    request = _request_from(data)
    user_id = callback.from_user.id
    summary = f"{request.gpu_id} x{request.gpu_count} {request.duration.describe('en')} {request.pricing.value}"
    try:
        issued = await quotes.issue(request, owner=owner_of(user_id), key=message_key(msg.chat.id, msg.message_id),
                                    request_text=f"guided: {summary}")
    except IdempotencyConflictError as exc:
        await callback.answer()
        await msg.answer(render_conflict(exc, lang, html=True))
        return
    except (QuoteInputError, SQLAlchemyError, OSError) as exc:
        log.warning("guided quote failed: %s", exc)
        await callback.answer(t("quote_unavailable", lang), show_alert=True)
        return
    await state.clear()
    await _edit(msg, render_issued(issued, lang, html=True), None)
    await callback.answer()


async def on_flow_cancel(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                         services: Services | None = None) -> None:
    data = await state.get_data()
    msg = _flow_message(callback, data)
    if msg is None:
        await _stale(callback, lang)
        return
    await state.clear()
    await _edit(msg, escape(t("quote_flow_cancelled", lang)), None)
    await callback.answer()


@router.callback_query(Sync(F.data.startswith("quote:")))
async def on_quote_it(callback: CallbackQuery, state: FSMContext, bot: Bot, lang: Lang = "ru",
                      services: Services | None = None) -> None:
    """The /fit "quote it" button: ``quote:{gpu_id}:{count}`` lands at the duration step."""
    quotes = _quotes(services)
    parts = (callback.data or "").split(":")
    if quotes is None or callback.message is None or len(parts) != 3 or not parts[2].isdecimal():
        await _stale(callback, lang)
        return
    limit = quotes.prices().max_gpus_per_quote
    problem: QuoteInputError | None = None
    if parts[1] not in quotes.rentable_gpu_ids():
        problem = QuoteInputError("not rentable", quotes.rentable_gpu_ids(), "gpu", "not_priced",
                                  gpu=parts[1][:32])
    elif not 1 <= int(parts[2]) <= limit:
        problem = QuoteInputError("count", [], "gpu_count", "bad_count", max=limit)
    if problem is not None:
        # well-formed but impossible (e.g. a /fit suggestion beyond the automatic limit): say why
        await callback.answer(render_input_error(problem, lang, html=False)[:200], show_alert=True)
        return
    gpu_id, count = parts[1], int(parts[2])
    text = escape(t("quote_flow_duration", lang, gpu=quotes.catalog.get(gpu_id).name, count=count))
    chat = callback.message.chat
    thread = getattr(callback.message, "message_thread_id", None)
    async with _flow_turn(chat.id, callback.from_user.id):
        sent = await bot.send_message(chat.id, text, reply_markup=_duration_keyboard(lang),
                                      message_thread_id=thread)
        await state.set_state(QuoteFlow.duration)
        await state.set_data({"msg_id": sent.message_id, "gpu": gpu_id, "count": count})
    await callback.answer()


StepHandler = Callable[[CallbackQuery, FSMContext, Lang, Services | None], Awaitable[None]]
# button prefix -> (the step it belongs to, its handler); any other combination is stale or forged
_STEPS: tuple[tuple[str, State | None, StepHandler], ...] = (
    ("qf:g:", QuoteFlow.gpu, on_flow_gpu),
    ("qf:n:", QuoteFlow.count, on_flow_count),
    ("qf:d:", QuoteFlow.duration, on_flow_duration),
    ("qf:p:", QuoteFlow.pricing, on_flow_pricing),
    ("qf:ok", QuoteFlow.confirm, on_flow_confirm),
    ("qf:x", None, on_flow_cancel),
)


@router.callback_query(Sync(F.data.startswith("qf:")))
async def on_flow_button(callback: CallbackQuery, state: FSMContext, lang: Lang = "ru",
                         services: Services | None = None) -> None:
    """Every flow button: checked against the saved step, one at a time per chat and user."""
    data = callback.data or ""
    async with _flow_turn(_callback_chat(callback), callback.from_user.id):
        current = await state.get_state()
        for prefix, step, handler in _STEPS:
            exact = not prefix.endswith(":")
            if (data == prefix) if exact else data.startswith(prefix):
                if step is None or current == step.state:
                    await handler(callback, state, lang, services)
                    return
                break
    # forged, garbage or out-of-step (e.g. pressed again after the flow ended)
    await _stale(callback, lang)
