"""Every button's callback data, one :class:`CallbackData` class per kind of button (prefixes are unique).

A button drawn by one router and handled by another (the /fit "quote it" button, «Арендовать» under a
quote, the vote buttons under an answer) is defined here, so neither router imports the other.
"""

from __future__ import annotations

from enum import StrEnum

from aiogram.filters.callback_data import CallbackData

MAX_CALLBACK_BYTES = 64  # bytes of callback_data the Bot API accepts


class FlowStep(StrEnum):
    """What a button of the guided /quote flow does (the packed values are those of before)."""

    GPU = "g"  # chose a GPU (``value``: its id)
    COUNT = "n"  # chose a count
    DURATION = "d"  # chose a duration (``value``: hours)
    PRICING = "p"  # chose a pricing (``value``: a Pricing)
    CONFIRM = "ok"
    CANCEL = "x"


class FlowButton(CallbackData, prefix="qf"):
    """A button of the guided /quote flow (:mod:`bot.routers.quote`)."""

    step: FlowStep
    value: str = ""


class QuoteItButton(CallbackData, prefix="quote"):
    """The /fit "quote it" button: enters the /quote flow at the duration step."""

    gpu: str
    count: int


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


class StopAnswer(CallbackData, prefix="stopa"):
    """«Стоп» under a group answer being generated: ``g`` the generation (draft) id, ``u`` the asker."""

    g: int
    u: int


class VoteButton(CallbackData, prefix="fb"):
    """👍 / 👎 / «неверно» under an answer (:mod:`bot.routers.feedback`)."""

    answer: str  # the answer record id (32 hex characters)
    vote: str  # up | down | wrong


class ClarifyButton(CallbackData, prefix="clar"):
    """A common answer to a clarifying question; ``value`` is sent on as the user's next message."""

    value: str


class SettingsCallback(CallbackData, prefix="set"):
    field: str  # "lang" | "len"
    value: str  # a language, a length or "auto"


class TermsCallback(CallbackData, prefix="terms"):
    view: str  # "cats" | "cat" | "term"
    category: int = 0
    page: int = 0
    entry: int = 0
