"""A short follow-up that changes one thing of the request before it.

    «2 h100 на неделю»  then «а на месяц?»      -> the quote of 2 × H100 for a month
    "8 a100 for 3 days" then "and for 4 of them?" -> the quote of 4 × A100 for 3 days
    «llama 70b на 2 h100» then «а в fp8?»        -> the fit of Llama 70B in FP8 on 2 × H100

Customers ask the second question of a quote or a fit in a few words; nothing in those words alone is a
request. Here the earlier request's slots are taken and the follow-up's replace the ones it names, and the
result is written as the canonical request the quote and fit parsers read (``h100-sxm x2 1 month``,
``llama-3.1-70b 2x h100-sxm quant=fp8 …``), so the reply is the one the full request gets.

A message is a follow-up only when it opens as one («а …», "and …", "what about …") or is nothing but the
slots themselves («на месяц», "4 cards"), and it does not ask something of its own (a definition, a how).
Pure: the pipeline routes; this module only merges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from app.slots import Slots, read_pricing
from gpu.fit.engine import FitResult
from gpu.fit.request import MAX_GPU_COUNT, FitInputError, RequestParser, parse_size
from gpu.quote.duration import Duration, format_amount
from gpu.quote.request import Pricing
from gpu.request_words import count_value

# «а …», «и …», «ну а …», «тогда …», «а если …», "and …", "what about …", "how about …", "ok and …", "same …"
OPENING = re.compile(
    r"(?i)^\s*(ну\s+)?(ок(ей)?|ладно|хорошо|понял|ясно)?[\s,.!]*(а|и|тогда|теперь|а\s+если|если|а\s+вот)\s+"
    r"|^\s*(ok(ay)?|alright|cool|thanks|got\s+it)?[\s,.!]*(and|what\s+about|how\s+about|same|then|now|also|"
    r"but|what\s+if|and\s+if)\b")
# a follow-up this short is the slot alone: «на месяц», "4 cards", «спот»
SLOTS_ONLY_WORDS = 3
# "how much for a week?", «сколько за месяц?»: a short price question asks the price of what was just discussed
PRICE_OPENING = re.compile(r"(?i)^\W*(how\s+much|what'?s\s+the\s+(price|cost)|price|cost|сколько|поч[её]м"
                           r"|а\s+сколько)\b")
SHORT_PRICE_WORDS = 6
MAX_FOLLOW_UP_WORDS = 9
_FIT_FIELDS = ("quant", "mode", "context", "batch", "kv_dtype")
# the words around a bare number in a follow-up: «а если две?», "what about 4?", «а на 4?», "and 3 then?"
_FILLER = frozenset({"а", "и", "ну", "если", "тогда", "ок", "окей", "на", "с", "взять", "давай", "лучше", "вместо",
                     "штуки", "and", "what", "about", "how", "if", "for", "with", "ok", "okay", "then", "take",
                     "instead", "make", "it", "of", "them", "со"})
_WORD = re.compile(r"[\wё-]+", re.IGNORECASE)
# "32k", «16к»: a context length written alone in a fit follow-up
_CONTEXT_ALONE = re.compile(r"(?i)\b(\d{1,4}(?:[.,]\d)?\s*[kк])(?![\wб])")


def opens_follow_up(text: str) -> bool:
    return bool(OPENING.search(text))


def reads_as_follow_up(text: str) -> bool:
    words = text.split()
    short_price = len(words) <= SHORT_PRICE_WORDS and bool(PRICE_OPENING.search(text))
    return len(words) <= MAX_FOLLOW_UP_WORDS and (opens_follow_up(text) or len(words) <= SLOTS_ONLY_WORDS
                                                  or short_price)


@dataclass(frozen=True)
class Refinement:
    text: str  # the canonical request the parsers read
    route: Literal["quote", "fit", "price"]


def bare_count(text: str) -> int | None:
    """The count a follow-up says with no unit: «а если две?», "what about 4?" (the GPUs talked about)."""
    words = [word for word in _WORD.findall(text.lower()) if word not in _FILLER]
    if len(words) != 1:
        return None
    value = count_value(words[0])
    return value if value is not None and 1 <= value <= MAX_GPU_COUNT else None


def quote_text(gpu_id: str, count: int | None, duration: Duration, pricing: Pricing | None) -> str:
    """The canonical quote request the quote parser reads: ``h100-sxm x2 1 week committed``."""
    text = f"{gpu_id} x{count or 1} " + " ".join(format_amount(amount, unit, "en") for amount, unit in duration.parts)
    return f"{text} {pricing.value}" if pricing is not None else text


def refine_quote(earlier: Slots, now_text: str, now: Slots) -> Refinement | None:
    """The earlier quote with what the follow-up names instead; None when it names nothing new."""
    if not earlier.gpus or earlier.duration is None:
        return None
    gpu = now.gpus[0] if now.gpus else earlier.gpus[0]
    count = now.count if now.count is not None else bare_count(now_text)
    count = count if count is not None else earlier.count
    duration = now.duration or earlier.duration
    # «а со скидкой за срок?»: a discount asked of a quote is its committed term
    pricing = now.pricing or read_pricing(now_text, True) or earlier.pricing
    if (gpu.id, count, duration.hours, pricing) == (earlier.gpus[0].id, earlier.count, earlier.duration.hours,
                                                    earlier.pricing):
        return None
    return Refinement(quote_text(gpu.id, count, duration, pricing), "quote")


def quote_of_price(earlier: Slots, now_text: str, now: Slots) -> Refinement | None:
    """«а если 4 штуки на неделю?» after «сколько стоит 4090?»: the quote of the GPU priced before (or the one
    the follow-up names), for the time it names; None when it names no time or the price was of several GPUs."""
    gpus = now.gpus or earlier.gpus
    if now.duration is None or len(gpus) != 1:
        return None
    count = now.count if now.count is not None else bare_count(now_text)
    pricing = now.pricing or read_pricing(now_text, True)
    return Refinement(quote_text(gpus[0].id, count, now.duration, pricing), "quote")


def quote_of_fit(result: FitResult, now: Slots, now_text: str) -> Refinement | None:
    """«а сколько это будет стоить на неделю?» after a fit: the quote of the configuration it found (the GPU
    asked when we rent it: as many as it takes when the count asked is too few; else the cheapest one we rent
    that fits)."""
    if now.duration is None:
        return None
    if result.fits and result.rentable:
        gpu_id, count = result.gpu.id, result.request.gpu_count
    elif result.gpu_was_given and result.rentable and result.min_gpus is not None:
        # "how many h100s for…?" then "how much for a month?": as many of the GPU asked as it takes
        gpu_id, count = result.gpu.id, result.min_gpus
    elif result.cheapest:
        gpu_id, count = result.cheapest[0].gpu_id, result.cheapest[0].count
    else:
        return None
    pricing = now.pricing or read_pricing(now_text, True)
    return Refinement(quote_text(gpu_id, now.count or count, now.duration, pricing), "quote")


def refine_fit(earlier: Slots, now_text: str, now: Slots, parser: RequestParser) -> Refinement | None:
    """The earlier fit request with the model, GPU, count, quantization, mode or context the follow-up
    names instead; None when it names none of them."""
    if earlier.fit is None or earlier.model is None:
        return None
    before = earlier.fit.request
    model_word = now.model if now.model is not None else earlier.model
    model = now.fit.request.model if now.model is not None and now.fit is not None else before.model
    try:
        baseline = parser.parse("", model=model).request
        said = parser.parse(now_text, model=model).request if now_text.strip() else baseline
    except FitInputError:
        return None
    changed = {name: getattr(said, name) for name in _FIT_FIELDS if getattr(said, name) != getattr(baseline, name)}
    context_alone = _CONTEXT_ALONE.search(now_text)
    if "context" not in changed and context_alone is not None:  # "what about 32k?"
        try:
            changed["context"] = parse_size(context_alone.group(1).replace(" ", ""), "context")
        except FitInputError:
            return None
    gpu = now.gpus[0].id if now.gpus else (before.gpu.id if before.gpu is not None else None)
    count = now.count if now.count is not None else (said.gpu_count if said.count_given else bare_count(now_text))
    if not changed and not now.gpus and count is None and now.model is None:
        return None  # "hey", «понятно»: nothing of the request is changed
    if count is None and before.count_given:  # «а на a100?» after «на 2 h100»: as many of the other GPU
        count = before.gpu_count
    values = {name: changed.get(name, getattr(before, name)) for name in _FIT_FIELDS}
    parts = [model_word]
    if gpu is not None:  # the GPU in the grammar the slots read too ("2x h100-sxm")
        parts.append(f"{count}x {gpu}" if count else gpu)
    parts += [f"quant={values['quant']}", f"mode={values['mode']}", f"batch={values['batch']}",
              f"kv={values['kv_dtype']}"]
    if values["context"]:
        parts.append(f"ctx={values['context']}")
    return Refinement(" ".join(parts), "fit")

