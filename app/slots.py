"""What a message names, read by the domain's own parsers before anything decides what it asks.

    «сколько будет стоить 4 x A100 на 2 недели?»  -> GPU a100-80gb, count 4, duration 2 weeks
    "can I run deepseek-r1 671b on 8x H200?"       -> model deepseek-r1, GPU h200, count 8
    «a100 40gb или 80gb для llama 13b fp16?»       -> GPUs a100-40gb and a100-80gb, model 13b

The GPU grammar is the one /fit and /quote share (:mod:`gpu.request_words`), the duration the quote
parser's (:mod:`gpu.quote.duration`), the model the fit parser's. A price "per hour" is a rate, not a
one-hour rental. Pure: no I/O, no model.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpu.catalog import GPUCatalog, GPUSpec
from gpu.fit.request import MAX_GPU_COUNT, FitInputError, ParsedRequest
from gpu.fit.service import FitService
from gpu.quote.duration import Duration, extract_duration, tokenize
from gpu.quote.request import Pricing, pricing_of
from gpu.request_words import count_value, read_gpu

# "в час", "per hour", "an hour", "/h", "hourly", "за час": the price of an hour, not a one-hour rental
_RATE = re.compile(r"(?i)(\b(в|за|per|an?|each|every|/)\s*(1\s*)?(час|hour|hr|h)\b|/\s*(час|hour|hr|h)\b|\bhourly\b"
                   r"|\b(поч[её]м|по\s+ч[её]м|цена|стоимость|сколько\s+стоит)\s+час\b"
                   r"|\b(per|по|в|за|a|each|every)\s+(минут\w*|minutes?|секунд\w*|seconds?)\b"
                   r"|\bпочасов\w*|\bчасов(ая|ой|ую)\s+(ставк|цен|оплат)\w*)")
# when, not how long: "next week", «на следующей неделе», "this month", «через неделю», "in two weeks"
_WHEN = re.compile(r"(?i)(\b(next|this|coming|following|last|previous|every|each)\s+(week|month|day)\w*"
                   r"|\b(следующ|эт|прошл|кажд|ближайш)\w*\s+(недел|месяц|дн|день|сутк)\w*"
                   r"|\bчерез\s+(\w+\s+)?(недел|месяц|дн|день|час)\w*|\bin\s+(a|one|two|\d+)\s+(weeks?|months?|days?)\b"
                   r"|\b(on|by|from|starting)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
                   # a moment of a run, not a rental's length: «после часа работы», "after 2 hours it crashes"
                   r"|\bпосле\s+(\w+\s+)?(час|дн|дня|сут|недел|минут)\w*|\bafter\s+(an?\s+|\d+\s+|a\s+few\s+)?(hours?|days?|minutes?|weeks?)\b"
                   # greetings are not durations: «добрый день», "good day"
                   r"|\bдобр\w*\s+(день|дня|утр\w*|вечер\w*)|\bgood\s+(day|morning|evening)\b"
                   # a quantity asked, not said: "how many hours of audio", «сколько часов длится»
                   r"|\bhow\s+(many|much)\s+(hours?|days?|weeks?|months?)\b|\bсколько\s+(час|дн|недел|месяц|сут)\w*)")
# "for 500 years", «на 2 года»: a unit the price list does not sell, read only to say so
_YEARS = re.compile(r"(?i)\b(\d{1,6}|a|one|один|одн\w*)\s*(years?|yrs?|год\w*|лет)\b")
# "со скидкой", "with a discount", "reserved": a committed term
_DISCOUNT = re.compile(r"(?i)(скидк\w*|discount\w*|дешевле\s+за\s+срок|long[\s-]term)")
PLACEMENT_ID = re.compile(r"\b(P-[0-9A-Z]{4,24})\b", re.IGNORECASE)
_OR_WORDS = frozenset({"или", "or", "vs", "vs.", "versus", "/", "либо", "против", "и", "and", "than", "чем", "over",
                       "вместо"})
_MEMORY_ONLY = re.compile(r"^(\d{2,3})\s*(gb|гб|g|г)?$")
_ARTICLES = frozenset({"a", "an"})
_BIG_COUNT = re.compile(r"^\d{4,7}$")
_SPLIT = re.compile(r"[\s,;!?()«»\"']+")
MAX_SCANNED_TOKENS = 80


@dataclass(frozen=True)
class GpuSlot:
    id: str
    name: str
    count: int | None  # written next to this GPU ("8x H200"); None when not said


@dataclass(frozen=True)
class Slots:
    gpus: tuple[GpuSlot, ...] = ()
    model: str | None = None  # a fit catalog id ("deepseek-r1") or a size ("13b")
    model_name: str | None = None
    duration: Duration | None = None
    years: int | None = None  # "for 500 years": said so that the reply can refuse it plainly
    pricing: Pricing | None = None
    placement_id: str | None = None
    loose_count: int | None = None  # "16 карт", "8 cards": a count written apart from any GPU name
    fractional_count: bool = False  # "1.5 h100": part of a GPU asked for (rentals are whole GPUs)
    fit: ParsedRequest | None = field(default=None, compare=False, repr=False)

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        return tuple(gpu.id for gpu in self.gpus)

    @property
    def count(self) -> int | None:
        """The GPU count the message states (the first one written next to a GPU, else one written apart)."""
        return next((gpu.count for gpu in self.gpus if gpu.count is not None), self.loose_count)

    @property
    def hours(self) -> Decimal | None:
        return self.duration.hours if self.duration is not None else None

    def to_json(self) -> dict[str, Any]:
        """What ``anchorgpu ask --json`` shows under "slots" (only what was found)."""
        found: dict[str, Any] = {}
        if self.model:
            found["model"] = self.model
        if self.gpus:
            found["gpus"] = list(self.gpu_ids)
        if self.count is not None:
            found["count"] = self.count
        if self.duration is not None:
            found["hours"] = int(self.duration.hours) if self.duration.hours == int(self.duration.hours) \
                else float(self.duration.hours)
        if self.years is not None:
            found["years"] = self.years
        if self.pricing is not None:
            found["pricing"] = self.pricing.value
        if self.placement_id:
            found["placement_id"] = self.placement_id
        return found


# how customers write amounts the parsers read in one spelling: «40гб», "h100s", "na nedelu", «полмесяца»
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(\d)\s*гб\b"), r"\1gb"),
    (re.compile(r"(?i)\bfortnights?\b"), "2 weeks"),
    (re.compile(r"(?i)\bon\s+demand\b"), "on-demand"),  # "for 10 hours on demand": the pricing, in one word
    # «по обычной цене», "at the regular rate": the hourly price, not a term or spot
    (re.compile(r"(?i)\bпо\s+обычн\w+\s+(цен|тариф|ставк)\w*|\b(at\s+)?(the\s+)?(regular|standard|normal|usual)\s+"
                r"(price|rate|pricing)\b"), "on-demand"),
    # how much, as customers type it («скок стоит», «скока», «скоко»)
    (re.compile(r"(?i)\bско(к|ка|ко|лька)\b"), "сколько"),
    (re.compile(r"(?i)\b(\d{1,4})\s*(миллиард\w*|млрд\.?|billion|bn)(?!\w)"), r"\1b"),  # «30 миллиардов»: 30b
    (re.compile(r"(?i)\b(\d{1,4})\s*(миллион\w*|млн\.?|million)(?!\w)"), r"\1m"),
    (re.compile(r"(?i)\bполмесяца\b"), "15 дней"),
    (re.compile(r"(?i)\bполнедели\b"), "84 часа"),
    (re.compile(r"(?i)\bполдня\b"), "12 часов"),
    (re.compile(r"(?i)\bполгода\b"), "6 месяцев"),
    # "the monthly price", «помесячно»: the price of one month (a rate per hour stays _RATE's)
    (re.compile(r"(?i)\bmonthly\b|\bпомесячн\w*"), "1 month"),
    (re.compile(r"(?i)\bweekly\b|\bпонедельн(о|ая|ую|ой)\b"), "1 week"),  # not «с понедельника»
    (re.compile(r"(?i)\bdaily\b|\bпосуточн\w*"), "1 day"),
    # the weekend is two days («на выходные», "over the weekend"); "every weekend" is a when (_WHEN)
    (re.compile(r"(?i)(?<!every )(?<!each )\b(the\s+)?weekend\b"), "2 days"),
    (re.compile(r"(?i)\bвыходн(ые|ых|ым)\b"), "2 дня"),
    (re.compile(r"(?i)\b(na|for)\s+(nedel[iuy]a?|nedelyu)\b"), "на неделю"),
    (re.compile(r"(?i)\bnedel[iy]?\b"), "недели"),
    (re.compile(r"(?i)\b(mesyac|mesjac|mesiac|mesac)[a-z]*\b"), "месяц"),
    (re.compile(r"(?i)\b(dnya|dney|dnej|den)\b"), "дня"),
    (re.compile(r"(?i)\bchas(a|ov)?\b"), "часа"),
    # the domain's words in Latin letters ("skolko stoit arenda h100 na nedelu"): read as the Cyrillic ones
    (re.compile(r"(?i)\bskol+ko\b"), "сколько"), (re.compile(r"(?i)\bstoi[tm]\b"), "стоит"),
    (re.compile(r"(?i)\bbudet\b"), "будет"), (re.compile(r"(?i)\barend[aeuy]\b"), "аренда"),
    (re.compile(r"(?i)\b(ts|c)ena\b"), "цена"), (re.compile(r"(?i)\bposchitai\b"), "посчитай"),
    (re.compile(r"(?i)\bvlez\w*"), "влезет"), (re.compile(r"(?i)\bpotyan\w*"), "потянет"),
    # model families in Cyrillic («гемма 3 27b», «лама 70б», «квен»): the catalog's names are Latin
    (re.compile(r"(?i)\b(гемм|джемм)[аеуы]\b"), "gemma"), (re.compile(r"(?i)\bл+ам[аеуы]\b"), "llama"),
    (re.compile(r"(?i)\bквен\w*"), "qwen"), (re.compile(r"(?i)\bмистрал[ьяею]?\b"), "mistral"),
    (re.compile(r"(?i)\bмикстрал[ьяею]?\b"), "mixtral"), (re.compile(r"(?i)\bдипс[иеи]к\w*"), "deepseek"),
    (re.compile(r"(?i)\b(висп|вишп)[еи]р\w*"), "whisper"), (re.compile(r"(?i)\bфлюкс\w*|\bфлакс\w*"), "flux"),
    (re.compile(r"(?i)\bшнел+[ья]?\b"), "schnell"),
    # «стейбл диффузию», «стабл диффужн», «сдхл»: Stable Diffusion as customers spell it in Cyrillic
    (re.compile(r"(?i)\b(сте[йи]?бл|стэйбл|стабл|стейбел)\w*\s+(диффуз|дифуз|диффуж|дифуж)\w*"), "stable diffusion"),
    (re.compile(r"(?i)\bсдхл\b|\bсд\s*хл\b"), "sdxl"),
    (re.compile(r"(?i)\b(\d{1,4})\s*[бb](?![\w/])"), r"\1b"),  # «70б» (not «3090 б/у»)
    # a version typed in Cyrillic after the family («deepseek р1», «в3»)
    (re.compile(r"(?i)\b(deepseek|qwen|llama|gemma)(\s*-?\s*)р(\d)"), r"\1\2r\3"),
    (re.compile(r"(?i)\b(deepseek|qwen|llama|gemma)(\s*-?\s*)в(\d)"), r"\1\2v\3"),
    (re.compile(r"[?!()«»\"“”]"), " "),
)


def normalise(text: str) -> str:
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def _tokens(text: str) -> list[str]:
    return [token.strip(".:[]{}") for token in _SPLIT.split(text.lower()) if token.strip(".:[]{}")]


_TIME_UNIT = re.compile(r"^(час\w*|ч|h|hrs?|hours?|дн\w*|день|сут\w*|days?|недел\w*|weeks?|месяц\w*|months?|минут\w*|"
                        r"minutes?|mins?)$")


def _conjunction_and_hours(tokens: list[str], start: int, end: int) -> bool:
    """«а» or "a" apart from a number that a unit of time follows: the amount of a rental, not an A100/A40."""
    return (end - start == 2 and tokens[start] in ("а", "a") and tokens[start + 1].isdigit()
            and end < len(tokens) and bool(_TIME_UNIT.match(tokens[end])))


def gpus_named(text: str, catalog: GPUCatalog) -> list[GpuSlot]:
    """Every GPU the text names, in order, each with its count; «a100 40gb или 80gb» names two."""
    tokens = _tokens(text)[:MAX_SCANNED_TOKENS]

    find = catalog.find_named
    found: list[GpuSlot] = []
    previous: GPUSpec | None = None
    i = 0
    while i < len(tokens):
        mention = read_gpu(tokens, i, find)
        if mention is not None and _conjunction_and_hours(tokens, i, mention.end):
            mention = None  # «а 100 часов?», "a 100 hours": a number of hours, not the A100
        if mention is not None:
            count = mention.count
            if count == 1 and tokens[i] in _ARTICLES:
                count = None  # "on a t4": one GPU, but no count was asked for
            if count is None and i > 0 and _BIG_COUNT.match(tokens[i - 1]) and find(tokens[i - 1]) is None:
                # "10000 H100": read, so that the quote can say the limit ("3090 4090": two GPUs, no count)
                count = int(tokens[i - 1])
            _add(found, mention.gpu, count)
            previous, i = mention.gpu, mention.end
            continue
        # "a100 40gb или 80gb", "h100 sxm vs pcie", "h100 pcie slower than sxm": a variant alone after "or" (or
        # "than") is a sibling of the GPU named
        if previous is not None and tokens[i] in _OR_WORDS and i + 1 < len(tokens):
            sibling = _sibling(previous, tokens[i + 1], catalog)
            if sibling is not None:
                _add(found, sibling, None)
                previous, i = sibling, i + 2
                continue
        i += 1
    return found


# a model's version before a GPU ("qwen 2.5 a100 потянет?") is no count of it
_MODEL_FAMILIES = frozenset({"qwen", "llama", "gemma", "mistral", "mixtral", "phi", "deepseek", "glm", "kimi", "flux",
                             "sd", "sdxl", "whisper", "gpt", "yi", "falcon", "qwq", "claude", "gemini", "v"})
# a count with a fraction, the word before it and the name after it ("1.5 h100", «2,5 x a100»)
_FRACTION = re.compile(r"(?i)(?:^|(?P<before>[^\W\d_]+)\s+|\s)(?P<amount>\d+[.,]\d+)\s*(?:[xх×*]\s*)?(?P<name>[\w-]+)")


def fractional_count(text: str, catalog: GPUCatalog) -> bool:
    """A count with a fraction right before a GPU name ("1.5 h100", «2,5 x a100»): part of a GPU asked for."""
    for match in _FRACTION.finditer(text[:2000]):
        if float(match.group("amount").replace(",", ".")).is_integer():
            continue
        if (match.group("before") or "").lower() in _MODEL_FAMILIES:
            continue  # "qwen 2.5 a100": the model's version
        if catalog.find_named(match.group("name").lower()) is not None:
            return True
    return False


def _add(found: list[GpuSlot], spec: GPUSpec, count: int | None) -> None:
    if all(slot.id != spec.id for slot in found):
        found.append(GpuSlot(spec.id, spec.name, count))


def _sibling(spec: GPUSpec, variant: str, catalog: GPUCatalog) -> GPUSpec | None:
    """The GPU of the same family as ``spec`` that ``variant`` (a memory size or a form factor) names."""
    family = next((word for word in spec.name.lower().split() if any(ch.isdigit() for ch in word)), None)
    if family is None or variant == family:
        return None
    size = _MEMORY_ONLY.match(variant)
    spelling = f"{family} {size.group(1)}gb" if size is not None else f"{family} {variant}"
    sibling = catalog.find(spelling)
    return sibling if sibling is not None and sibling.id != spec.id else None


# "16 карт", "8 cards", «4 видюхами», "2 nodes of 8": a count of GPUs written without their name
_UNIT = re.compile(r"^(gpus?|гпу\w*|cards?|карт\w*|видеокарт\w*|видюх\w*|карточ\w*|штук\w*|шт|pcs|units?|x)$")


# «8 хватит?», "will 4 be enough": a number asked as enough is a count of the GPUs named
_ENOUGH = re.compile(r"^(хватит|хватят|hvatit|hvatyat|достаточно|enough|suffice|sufficient|потянут|вывезут)$")
_BE = frozenset({"be", "ли", "будет", "будут", "is", "are"})
_EACH = frozenset({"по"})
_PIECES = re.compile(r"^(штук\w*|шт|pcs)$")
_OF_THEM = re.compile(r"(?i)\b(\w+)\s+(of\s+(them|those|these)|таких|такие|таких\s+же)\b")
_PAIR_OF = re.compile(r"(?i)\b(a\s+)?pair\s+of\s+(them|those|these|cards|gpus)\b|\bпар[аеуы]\s+(штук|карт\w*|гпу)\b")


def loose_count(text: str) -> int | None:
    tokens = _tokens(text)[:MAX_SCANNED_TOKENS]
    for index, (number, unit) in enumerate(itertools.pairwise(tokens)):
        value = count_value(number)
        if value is None:
            continue
        after = tokens[index + 2] if index + 2 < len(tokens) else ""
        if index > 0 and tokens[index - 1] in _EACH and _PIECES.match(unit):
            continue  # «пачками по 8 штук»: so many of something else at a time, not GPUs
        enough = value <= MAX_GPU_COUNT and (_ENOUGH.match(unit) or (unit in _BE and _ENOUGH.match(after)))
        if _UNIT.match(unit) or enough:  # "is a 5090 enough": a GPU's number, not a count
            return value
    for unit, number in itertools.pairwise(tokens):  # «карта одна», "cards: 2"
        value = count_value(number)
        if value is not None and value <= MAX_GPU_COUNT and _UNIT.match(unit) and unit != "x":
            return value
    if _PAIR_OF.search(text):  # "a pair of them"
        return 2
    of_them = _OF_THEM.search(text)  # "8 of them", «4 таких»: the GPUs the conversation is about
    if of_them is not None:
        value = count_value(of_them.group(1).lower())
        if value is not None and value <= MAX_GPU_COUNT:
            return value
    return None


# the term a commitment is for («с коммитом на полгода», "committed for 6 months", "reserve it for a year")
_COMMITTED_FOR = re.compile(r"(?i)\b(коммит\w*|резерв\w*|фиксированн\w*\s+срок\w*|commit\w*|reserv\w*(\s+it)?)"
                            r"\s+(на|for|of)\s+(?P<term>[^,;!?]+)")


def _durations(text: str) -> Duration | None:
    # "for a month: 2 a100 or 1 h200": a unit before a colon or a full stop is still the unit
    duration, _ = extract_duration([token.rstrip(":.!?") or token for token in tokenize(text)])
    return duration


def read_duration(text: str) -> Duration | None:
    """A rental length written anywhere in the text; a rate ("в час", "per hour") is not one."""
    masked = _WHEN.sub(" ", _RATE.sub(" ", text))
    duration = _durations(masked)
    if duration is None or duration.hours <= 0:
        return None
    committed = _COMMITTED_FOR.search(masked)
    term = _durations(committed.group("term")) if committed is not None else None
    if term is not None and term.hours > 0 and len(duration.parts) > len(term.parts):
        # «держать 4 a100 месяц с коммитом на полгода»: the month is what the price is asked per, the
        # commitment's six months are the rental (it had been quoted as seven)
        return term
    if len(duration.parts) > 1 and len(set(duration.parts)) == 1:
        # "for a weekend hackathon, so like 2 days": the same length said twice is one length, not their sum
        return Duration(duration.parts[:1])
    return duration


# the case forms a sentence puts pricing words in: «по споту», «с резервом», "reserving", "committing"
_PRICING_FORMS: tuple[tuple[str, Pricing], ...] = (
    ("спот", Pricing.SPOT), ("прерыв", Pricing.SPOT), ("spot", Pricing.SPOT), ("interrupt", Pricing.SPOT),
    ("preempt", Pricing.SPOT), ("резерв", Pricing.COMMITTED), ("зарезерв", Pricing.COMMITTED),
    ("коммит", Pricing.COMMITTED), ("reserv", Pricing.COMMITTED), ("commit", Pricing.COMMITTED),
    ("обязательств", Pricing.COMMITTED), ("он-деманд", Pricing.ON_DEMAND), ("ондеманд", Pricing.ON_DEMAND),
    ("он-диманд", Pricing.ON_DEMAND),
)


# a pricing word after these is one the customer does not want («без спота», "not spot", "no reserved")
_NEGATIONS = frozenset({"без", "не", "кроме", "no", "not", "without", "non", "never"})


# what may stand between a negation and the pricing word it negates («без всяких резервов», "not a spot one")
_NEGATION_FILLERS = frozenset({"всяких", "всякого", "никаких", "какого-либо", "any", "a", "the", "this"})


def read_pricing(text: str, has_duration: bool) -> Pricing | None:
    before: list[str] = []
    for token in tokenize(text):
        word = token.strip(".?!,;")
        pricing = pricing_of(word) or next((p for stem, p in _PRICING_FORMS if word.startswith(stem)), None)
        negated = bool(before) and (before[-1] in _NEGATIONS or (
            len(before) > 1 and before[-1] in _NEGATION_FILLERS and before[-2] in _NEGATIONS))
        if pricing is not None and not negated:
            return pricing
        before.append(word.lower())
    if has_duration and _DISCOUNT.search(text):
        return Pricing.COMMITTED
    return None


def read_years(text: str) -> int | None:
    match = _YEARS.search(text)
    if match is None:
        return None
    amount = match.group(1)
    return int(amount) if amount.isdecimal() else 1


def read_model(text: str, fit: FitService) -> tuple[str | None, str | None, ParsedRequest | None]:
    """The model a fit request would use (catalog id or size), its display name, and the parsed request."""
    try:
        parsed = fit.parser.parse(text)
    except FitInputError:
        return None, None, None
    spec = parsed.request.model
    model_id = spec.id if fit.data.models.find(spec.id) is not None else _size_label(spec.params)
    return model_id, spec.name, parsed


def _size_label(params: float | int | None) -> str | None:
    if not params:
        return None
    billions = float(params) / 1e9
    return f"{billions:g}b" if billions >= 1 else f"{billions * 1000:g}m"


def read_slots(text: str, fit: FitService) -> Slots:
    text = normalise(text)
    catalog = fit.data.gpus
    gpus = tuple(gpus_named(text, catalog))
    duration = read_duration(text)
    model, model_name, parsed = read_model(text, fit) if len(text) <= 500 else (None, None, None)
    placement = PLACEMENT_ID.search(text)
    return Slots(gpus=gpus, model=model, model_name=model_name, duration=duration, years=read_years(text),
                 pricing=read_pricing(text, duration is not None),
                 placement_id=placement.group(1).upper() if placement else None, loose_count=loose_count(text),
                 fractional_count=fractional_count(text, catalog),
                 fit=parsed)
