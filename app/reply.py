"""The typed replies of the one reply pipeline (:mod:`app.pipeline`): data the fronts render.

Every front (Telegram private chats, groups, guest mode, the console chat, ``anchorgpu ask``) gets one of
these for a message and only draws it: a fit report, a quote, a catalog answer (price list, GPU specs, a
company rule), a GPU comparison, a rental-lifecycle answer, small talk, a clarifying question, a refusal,
or — the one kind computed by the front, since it streams — a glossary answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from app.intents import Intent
from app.lifecycle import LifecycleAnswer
from app.router import RouteScores
from app.slots import Slots
from app.smalltalk import SmallTalkKind
from gpu.compare import GpuComparison
from gpu.fit.engine import FitResult
from gpu.fit.request import FitInputError
from gpu.quote.engine import Quote
from gpu.quote.request import QuoteInputError, QuoteRequest
from infra.i18n import Lang, Phrase

Missing = Literal["gpu", "duration", "model"]


@dataclass(frozen=True)
class Routing:
    """Why a message went where it went: the route, the slots found, the semantic scores (if any)."""

    intent: str
    slots: Slots
    semantic: RouteScores | None = None
    merged_with: str | None = None  # a clarified request: the earlier message this one completes

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"intent": self.intent, "slots": self.slots.to_json()}
        if self.semantic is not None:
            document["semantic"] = {"route": self.semantic.route, "score": round(self.semantic.score, 4),
                                    "margin": round(self.semantic.margin, 4), "nearest": self.semantic.nearest}
        if self.merged_with is not None:
            document["completes"] = self.merged_with
        return document


@dataclass(frozen=True)
class BaseReply:
    question: str
    lang: Lang
    routing: Routing


@dataclass(frozen=True)
class FitReply(BaseReply):
    results: tuple[FitResult, ...] = ()  # one, or one per GPU for "X or Y for Z"
    error: FitInputError | None = None
    currency: str = "USD"
    # "what's the biggest model i can run on a 4090?": ``results`` are the largest models that fit, one per
    # weight format (gpu.fit.largest); none when nothing in the catalog fits
    largest: bool = False


@dataclass(frozen=True)
class QuoteReply(BaseReply):
    quote: Quote | None = None
    request: QuoteRequest | None = None
    error: QuoteInputError | None = None
    # "что дешевле на месяц: 8 A100 или 4 H100?": every configuration asked, the same way and time, ``quote``
    # (the first) among them; empty for a single configuration
    options: tuple[tuple[QuoteRequest, Quote], ...] = ()
    chosen: bool = False  # the options are GPUs chosen for a requirement (memory, cheapest), not named
    min_memory_gb: int | None = None  # that requirement's memory
    # more memory than any one GPU has and no count said ("640GB of VRAM for a week"): the memory is a total,
    # the options are sets of GPUs that add up to it
    memory_in_total: bool = False
    # a model named with no GPU ("how much to run llama 70b for a week"): the options are the cheapest
    # configurations that fit it, by the fit
    fitted_model: str | None = None
    # a budget said with a term and no GPU ("I have $2000 for a week"): the options are the most of each GPU it buys
    budget: Decimal | None = None
    # with ``fitted_model``: the fit's cheaper ways (adapters for training, compressed weights for serving), each
    # as (way, request, quote) for the same term
    lighter: tuple[tuple[str, QuoteRequest, Quote], ...] = ()


@dataclass(frozen=True)
class CatalogReply(BaseReply):
    """The price list, a GPU's specifications, or a company rule quoted (``intent.kind``)."""

    intent: Intent = field(default_factory=lambda: Intent("glossary", ""))


@dataclass(frozen=True)
class CompareReply(BaseReply):
    comparison: GpuComparison | None = None


@dataclass(frozen=True)
class LifecycleReply(BaseReply):
    answer: LifecycleAnswer | None = None


@dataclass(frozen=True)
class SmallTalkReply(BaseReply):
    kind: SmallTalkKind = "help"


@dataclass(frozen=True)
class ClarifyOption:
    label: str  # what the button shows
    value: str  # what choosing it sends, as if the user had typed it


@dataclass(frozen=True)
class ClarifyReply(BaseReply):
    """A request with a slot missing: the question to ask and the common answers (buttons in Telegram)."""

    route: Literal["quote", "fit"] = "quote"
    missing: Missing = "duration"
    known: str = ""  # what was understood so far ("4 × A100 80GB"), for the question's wording
    count: int | None = None  # GPUs asked for with none named ("16 gpus for a week"): kept in the question
    options: tuple[ClarifyOption, ...] = ()


@dataclass(frozen=True)
class RefusalReply(BaseReply):
    reason: Phrase = field(default_factory=lambda: Phrase.of("answer_out_of_scope"))


@dataclass(frozen=True)
class GlossaryReply(BaseReply):
    """Answered by the answerer, streamed by the front (the pipeline has read the history for it).
    ``topical``: the router is sure the words ask about a glossary concept (the answerer's gate then takes
    a named headword as enough)."""

    topical: bool = False


Reply = (FitReply | QuoteReply | CatalogReply | CompareReply | LifecycleReply | SmallTalkReply | ClarifyReply
         | RefusalReply | GlossaryReply)
