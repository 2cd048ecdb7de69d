"""/quote (one line or a guided flow with inline keyboards) and /quotes.

* ``/quote h100 x8 2 weeks`` answers at once. Its idempotency key defaults to ``tg:<chat>:<message>``, so
  a redelivered update replays the same quote and an edited message cannot create a second one;
  ``key=…`` in the text overrides it.
* bare ``/quote`` walks through GPU → count → duration → pricing → confirm. The step and the choices live
  in the FSM storage (database or Redis), so the flow survives a restart. Each button is a
  :class:`bot.ui.callbacks.FlowButton`; a step's handler runs only in its state (aiogram's state filters)
  and only for the flow's current message (:class:`ActiveFlow`); anything else — forged, stale, out of
  step — gets a polite "this button is out of date". Confirming uses the key ``tg:<chat>:<flow message>``:
  a double tap replays instead of quoting twice.
* :class:`bot.ui.callbacks.QuoteItButton` (the /fit "quote it" button, ``quote:{gpu_id}:{count}``) enters
  the flow at the duration step.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from aiogram import Bot, F, Router
from aiogram.filters import BaseFilter, Command, CommandObject, StateFilter
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, Message
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from app.views.quote import (
    issued_report,
    render_conflict,
    render_input_error,
    render_issued,
    render_quote,
    render_recent,
)
from bot.faultpoints import crash_point
from bot.filters import Sync
from bot.fsm_storage import FSM_UNAVAILABLE
from bot.middlewares.turns import FlowTurnMiddleware, flow_turn
from bot.output.rich import RichReplies, send_report
from bot.output.streaming import target_of
from bot.ui.callbacks import FlowButton, FlowStep, QuoteItButton
from bot.ui.keyboards import (
    flow_confirm_keyboard,
    flow_count_keyboard,
    flow_duration_keyboard,
    flow_gpu_keyboard,
    flow_pricing_keyboard,
    rent_keyboard,
)
from gpu.quote.duration import Duration, Unit
from gpu.quote.request import Pricing, QuoteInputError, QuoteRequest, parse_duration_or_error, split_key
from gpu.quote.service import QuoteService
from gpu.quote.store import IdempotencyConflictError
from infra.i18n import Lang, t
from infra.markup import HTML, escape
from infra.settings import Settings

log = logging.getLogger(__name__)
router = Router(name=__name__)


class QuoteFlow(StatesGroup):
    """The flow's steps, in order (the step is the FSM state; the choices so far are :class:`FlowChoices`)."""

    gpu = State()
    count = State()
    duration = State()
    pricing = State()
    confirm = State()


class FlowChoices(BaseModel):
    """What the flow has chosen so far: the FSM data, typed (stored as the same JSON object as before:
    ``msg_id``, ``gpu``, ``count``, ``duration`` as ``[[amount, unit], …]``, ``pricing``)."""

    model_config = ConfigDict(frozen=True)

    msg_id: int | None = None  # the flow's current message: only its keyboard is live
    gpu: str | None = None
    count: int | None = None
    duration: list[list[str]] | None = None
    pricing: str | None = None

    @classmethod
    async def load(cls, state: FSMContext) -> FlowChoices:
        """The saved choices; data that is not a flow's (garbage, another version's) reads as none."""
        try:
            return cls.model_validate(await state.get_data())
        except ValidationError:
            return cls()

    async def save(self, state: FSMContext) -> None:
        await state.set_data(self.model_dump(exclude_none=True))

    def but(self, **changes: Any) -> FlowChoices:
        return self.model_validate({**self.model_dump(), **changes})

    def duration_value(self) -> Duration:
        assert self.duration is not None
        return Duration(tuple((Decimal(amount), Unit(unit)) for amount, unit in self.duration))

    def request(self, pricing: str | None = None) -> QuoteRequest:
        """The quote request chosen; ValueError when a choice is missing (a flow out of step)."""
        pricing = pricing or self.pricing
        if self.gpu is None or self.count is None or self.duration is None or pricing is None:
            raise ValueError("the flow has not chosen everything")
        return QuoteRequest(gpu_id=self.gpu, gpu_count=self.count, duration=self.duration_value(),
                            pricing=Pricing(pricing))


router.callback_query.outer_middleware(FlowTurnMiddleware())


@dataclass(frozen=True)
class Flow:
    """The flow's saved choices and its message (the one whose keyboard is current)."""

    choices: FlowChoices
    message: Message


class ActiveFlow(BaseFilter):
    """Passes a flow button pressed on the flow's current message, injecting ``flow``; a keyboard of an
    older message, or a flow that ended, does not pass (the stale handler answers it)."""

    async def __call__(self, callback: CallbackQuery, state: FSMContext) -> bool | dict[str, Any]:
        choices = await FlowChoices.load(state)
        message = callback.message
        if not isinstance(message, Message) or choices.msg_id != message.message_id:
            return False
        return {"flow": Flow(choices, message)}


def owner_of(user_id: int) -> str:
    return f"tg:{user_id}"


def message_key(chat_id: int, message_id: int) -> str:
    """The default idempotency key: one Telegram message can produce at most one quote."""
    return f"tg:{chat_id}:{message_id}"


# ---- one-line /quote ---------------------------------------------------------------------------------
@router.message(Command("quote"))
@router.edited_message(Command("quote"))
async def on_quote(message: Message, command: CommandObject, state: FSMContext, quotes: QuoteService,
                   settings: Settings, lang: Lang, bot: Bot, rich: RichReplies | None = None) -> None:
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
        await message.answer(render_input_error(exc, lang, HTML) + "\n\n" + escape(t("quote_usage", lang)))
        return
    except IdempotencyConflictError as exc:
        await message.answer(render_conflict(exc, lang, HTML, edited=derived))
        return
    except (SQLAlchemyError, OSError):  # OSError: the database refused the connection
        log.exception("quote store failed")
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    crash_point(settings, "quote_stored")  # test-only, see bot/faultpoints.py
    await send_report(bot, target_of(message), issued_report(issued, lang), render_issued(issued, lang, HTML),
                      lang=lang, rich=rich, reply_markup=rent_keyboard(issued.quote_id, lang), reply=False)


@router.message(Command("quotes"))
async def on_quotes(message: Message, quotes: QuoteService, lang: Lang) -> None:
    user_id = message.from_user.id if message.from_user else message.chat.id
    try:
        recent = await quotes.recent(owner_of(user_id), limit=10)
    except (SQLAlchemyError, OSError):
        log.exception("quote store failed")
        await message.answer(escape(t("quote_unavailable", lang)))
        return
    await message.answer(render_recent(recent, lang, HTML))


def _gpu_name(quotes: QuoteService, choices: FlowChoices) -> str:
    return quotes.catalog.get(str(choices.gpu)).name


def _duration_to(duration: Duration) -> list[list[str]]:
    return [[format(amount, "f"), unit.value] for amount, unit in duration.parts]


def _decimal_in(raw: str, low: int, high: int) -> int | None:
    return int(raw) if raw.isdecimal() and low <= int(raw) <= high else None


async def _stale(callback: CallbackQuery, lang: Lang) -> None:
    await callback.answer(t("quote_flow_stale", lang), show_alert=False)


async def _start_flow(message: Message, state: FSMContext, quotes: QuoteService, lang: Lang) -> None:
    user_id = message.from_user.id if message.from_user else message.chat.id
    async with flow_turn(message.chat.id, user_id):
        # the step first: with the FSM storage down this fails before a keyboard that could not work is sent
        await state.set_state(QuoteFlow.gpu)
        sent = await message.answer(escape(t("quote_flow_gpu", lang)), reply_markup=flow_gpu_keyboard(quotes, lang))
        await FlowChoices(msg_id=sent.message_id).save(state)


async def _to_pricing(state: FSMContext, quotes: QuoteService, duration: Duration, lang: Lang,
                      msg: Message | None, reply_to: Message | None) -> None:
    choices = (await FlowChoices.load(state)).but(duration=_duration_to(duration))
    await choices.save(state)
    await state.set_state(QuoteFlow.pricing)
    text = escape(t("quote_flow_pricing", lang, gpu=_gpu_name(quotes, choices), count=choices.count,
                    duration=duration.describe(lang)))
    markup = flow_pricing_keyboard(quotes, str(choices.gpu), lang)
    if msg is not None:
        await msg.edit_text(text, reply_markup=markup)
    elif reply_to is not None:
        sent = await reply_to.answer(text, reply_markup=markup)
        await choices.but(msg_id=sent.message_id).save(state)


# ---- guided flow: one handler per step, each in its own state ----------------------------------------
@router.callback_query(FlowButton.filter(F.step == FlowStep.GPU), StateFilter(QuoteFlow.gpu), ActiveFlow())
async def on_flow_gpu(callback: CallbackQuery, callback_data: FlowButton, flow: Flow, state: FSMContext,
                      quotes: QuoteService, lang: Lang) -> None:
    gpu_id = callback_data.value
    if gpu_id not in quotes.rentable_gpu_ids():
        await _stale(callback, lang)
        return
    await flow.choices.but(gpu=gpu_id).save(state)
    await state.set_state(QuoteFlow.count)
    await flow.message.edit_text(escape(t("quote_flow_count", lang, gpu=quotes.catalog.get(gpu_id).name)),
                                 reply_markup=flow_count_keyboard(quotes, lang))
    await callback.answer()


@router.callback_query(FlowButton.filter(F.step == FlowStep.COUNT), StateFilter(QuoteFlow.count), ActiveFlow())
async def on_flow_count(callback: CallbackQuery, callback_data: FlowButton, flow: Flow, state: FSMContext,
                        quotes: QuoteService, lang: Lang) -> None:
    count = _decimal_in(callback_data.value, 1, quotes.prices().max_gpus_per_quote)
    if count is None or flow.choices.gpu is None:
        await _stale(callback, lang)
        return
    await flow.choices.but(count=count).save(state)
    await state.set_state(QuoteFlow.duration)
    await flow.message.edit_text(escape(t("quote_flow_duration", lang, gpu=_gpu_name(quotes, flow.choices),
                                          count=count)), reply_markup=flow_duration_keyboard(lang))
    await callback.answer()


@router.callback_query(FlowButton.filter(F.step == FlowStep.DURATION), StateFilter(QuoteFlow.duration), ActiveFlow())
async def on_flow_duration(callback: CallbackQuery, callback_data: FlowButton, flow: Flow, state: FSMContext,
                           quotes: QuoteService, lang: Lang) -> None:
    hours = _decimal_in(callback_data.value, 1, quotes.prices().max_duration_days * 24)
    if hours is None or flow.choices.count is None:
        await _stale(callback, lang)
        return
    await _to_pricing(state, quotes, Duration.of_hours(hours), lang, flow.message, None)
    await callback.answer()


@router.message(StateFilter(QuoteFlow.duration), Sync(F.text), Sync(~F.text.startswith("/")))
async def on_flow_typed_duration(message: Message, state: FSMContext, quotes: QuoteService, lang: Lang) -> None:
    if (await FlowChoices.load(state)).count is None:
        await state.clear()
        await message.answer(escape(t("quote_flow_stale", lang)))
        return
    try:
        duration = parse_duration_or_error(message.text or "")
        if duration.hours > quotes.prices().max_duration_days * 24:
            raise QuoteInputError("too long", [], "duration", "too_long",
                                  days=quotes.prices().max_duration_days)
    except QuoteInputError as exc:
        await message.answer(render_input_error(exc, lang, HTML))
        return
    user_id = message.from_user.id if message.from_user else message.chat.id
    async with flow_turn(message.chat.id, user_id):
        await _to_pricing(state, quotes, duration, lang, None, message)


@router.message(StateFilter(FSM_UNAVAILABLE), Sync(F.text), Sync(~F.text.startswith("/")),
                Sync(lambda message: message.chat.type == "private" and _is_duration(message.text or "")))
async def on_typed_duration_unavailable(message: Message, lang: Lang) -> None:
    """The step of this chat cannot be read (Redis down): a typed duration may be a flow's answer, and
    answering it as a question would be nonsense. Other text is a question as usual."""
    await message.answer(escape(t("fsm_unavailable", lang)))


def _is_duration(text: str) -> bool:
    try:
        parse_duration_or_error(text)
    except QuoteInputError:
        return False
    return True


@router.callback_query(FlowButton.filter(F.step == FlowStep.PRICING), StateFilter(QuoteFlow.pricing), ActiveFlow())
async def on_flow_pricing(callback: CallbackQuery, callback_data: FlowButton, flow: Flow, state: FSMContext,
                          quotes: QuoteService, lang: Lang) -> None:
    if callback_data.value not in {p.value for p in Pricing} or flow.choices.duration is None:
        await _stale(callback, lang)
        return
    try:
        preview = quotes.preview(flow.choices.request(pricing=callback_data.value))
    except (QuoteInputError, KeyError, ValueError, InvalidOperation) as exc:
        text = render_input_error(exc, lang) if isinstance(exc, QuoteInputError) else ""
        await callback.answer(text[:190] or t("quote_flow_stale", lang), show_alert=True)
        return
    await flow.choices.but(pricing=callback_data.value).save(state)
    await state.set_state(QuoteFlow.confirm)
    text = render_quote(preview, lang, HTML) + "\n\n" + escape(t("quote_flow_confirm", lang))
    await flow.message.edit_text(text, reply_markup=flow_confirm_keyboard(lang))
    await callback.answer()


@router.callback_query(FlowButton.filter(F.step == FlowStep.CONFIRM), StateFilter(QuoteFlow.confirm), ActiveFlow())
async def on_flow_confirm(callback: CallbackQuery, flow: Flow, state: FSMContext, quotes: QuoteService,
                          lang: Lang) -> None:
    if flow.choices.pricing is None:
        await _stale(callback, lang)
        return
    request = flow.choices.request()
    msg = flow.message
    summary = f"{request.gpu_id} x{request.gpu_count} {request.duration.describe('en')} {request.pricing.value}"
    try:
        issued = await quotes.issue(request, owner=owner_of(callback.from_user.id),
                                    key=message_key(msg.chat.id, msg.message_id), request_text=f"guided: {summary}")
    except IdempotencyConflictError as exc:
        await callback.answer()
        await msg.answer(render_conflict(exc, lang, HTML))
        return
    except (QuoteInputError, SQLAlchemyError, OSError) as exc:
        log.warning("guided quote failed: %s", exc)
        await callback.answer(t("quote_unavailable", lang), show_alert=True)
        return
    await state.clear()
    await msg.edit_text(render_issued(issued, lang, HTML), reply_markup=rent_keyboard(issued.quote_id, lang))
    await callback.answer()


@router.callback_query(FlowButton.filter(F.step == FlowStep.CANCEL), StateFilter(QuoteFlow), ActiveFlow())
async def on_flow_cancel(callback: CallbackQuery, flow: Flow, state: FSMContext, lang: Lang) -> None:
    await state.clear()
    await flow.message.edit_text(escape(t("quote_flow_cancelled", lang)), reply_markup=None)
    await callback.answer()


# ---- the /fit "quote it" button ----------------------------------------------------------------------
@router.callback_query(QuoteItButton.filter())
async def on_quote_it(callback: CallbackQuery, callback_data: QuoteItButton, state: FSMContext, bot: Bot,
                      quotes: QuoteService, lang: Lang) -> None:
    """Lands at the duration step of the flow, GPU and count chosen."""
    if callback.message is None:
        await _stale(callback, lang)
        return
    limit = quotes.prices().max_gpus_per_quote
    gpu_id, count = callback_data.gpu, callback_data.count
    problem: QuoteInputError | None = None
    if gpu_id not in quotes.rentable_gpu_ids():
        problem = QuoteInputError("not rentable", quotes.rentable_gpu_ids(), "gpu", "not_priced", gpu=gpu_id[:32])
    elif not 1 <= count <= limit:
        problem = QuoteInputError("count", [], "gpu_count", "bad_count", max=limit)
    if problem is not None:
        # well-formed but impossible (e.g. a /fit suggestion beyond the automatic limit): say why
        await callback.answer(render_input_error(problem, lang)[:200], show_alert=True)
        return
    text = escape(t("quote_flow_duration", lang, gpu=quotes.catalog.get(gpu_id).name, count=count))
    chat = callback.message.chat
    thread = getattr(callback.message, "message_thread_id", None)
    await state.set_state(QuoteFlow.duration)  # first, as in _start_flow
    sent = await bot.send_message(chat.id, text, reply_markup=flow_duration_keyboard(lang), message_thread_id=thread)
    await FlowChoices(msg_id=sent.message_id, gpu=gpu_id, count=count).save(state)
    await callback.answer()


@router.callback_query(Sync(F.data.startswith(f"{FlowButton.__prefix__}:")), StateFilter(FSM_UNAVAILABLE))
async def on_flow_button_unavailable(callback: CallbackQuery, lang: Lang) -> None:
    """A flow button while the step cannot be read (Redis down): the flow resumes once it is back."""
    await callback.answer(t("fsm_unavailable", lang), show_alert=True)


@router.callback_query(Sync(F.data.startswith((f"{FlowButton.__prefix__}:", f"{QuoteItButton.__prefix__}:"))))
async def on_stale_quote_button(callback: CallbackQuery, lang: Lang) -> None:
    """A quote button out of step, of an older message, of an ended flow, or forged."""
    await _stale(callback, lang)
