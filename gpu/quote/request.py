"""A quote request: GPU x count x duration x pricing, read from free text in Russian or English.

"h100 x8 2 weeks", "8x H100 1 month 2 weeks committed", "4 gpus a100 45 days spot", "2×L40S на 3 часа",
"h200 x4 1 месяц резерв key=order-17". The request is normalised (catalog id, hours) so that two spellings
of one purchase share one fingerprint: that is what an idempotency key is compared against.

Whatever is typed, the parser returns a request or raises :class:`QuoteInputError` with a ``code`` the
fronts render (``quote_err_<code>``): a count below one is ``bad_count`` here, one above the price list's
limit is ``bad_count`` from the engine (it alone knows the limit, unless ``max_gpus`` is passed), a zero or
negative duration ``zero_duration``, more than :data:`MAX_TEXT` characters ``text_too_long``. Letters of
other alphabets and emoji are dropped first, so "能在H100上运行吗" asks for a duration like "h100" does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from gpu.catalog import GPUCatalog, GPUSpec, UnknownNameError
from gpu.quote.duration import Duration, DurationError, extract_duration, parse_duration, tokenize
from gpu.request_words import UNIT_WORDS, count_value, digits_value, drop_foreign, plural_tolerant

MAX_TEXT = 500  # the /fit parser's limit too; a request with an idempotency key fits in a fraction of it
# data/prices.yaml max_gpus_per_quote's default: what "from 1 to N" says when the caller gave no limit
DEFAULT_MAX_GPUS = 64


class Pricing(Enum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    COMMITTED = "committed"


class QuoteInputError(ValueError):
    """Bad input, already phrased for the user; ``suggestions`` are alternatives worth offering."""

    def __init__(self, message: str, suggestions: list[str] | None = None, field: str = "",
                 code: str = "invalid", **params: object) -> None:
        super().__init__(message)
        self.suggestions = suggestions or []
        self.field = field
        # ``code`` + ``params`` let a front end say the same thing in the user's language
        self.code = code
        self.params = params


@dataclass(frozen=True)
class QuoteRequest:
    gpu_id: str
    gpu_count: int
    duration: Duration
    pricing: Pricing

    def normalized(self) -> dict[str, str | int]:
        """What makes two requests the same purchase: spelling of the duration does not matter."""
        hours = self.duration.hours
        return {"gpu": self.gpu_id, "gpu_count": self.gpu_count, "pricing": self.pricing.value,
                "hours": format(hours.normalize(), "f") if hours else "0"}

    def fingerprint(self) -> str:
        canonical = json.dumps(self.normalized(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class ParsedText:
    request: QuoteRequest
    key: str | None


_PRICING_WORDS: dict[str, Pricing] = {
    "spot": Pricing.SPOT, "interruptible": Pricing.SPOT, "preemptible": Pricing.SPOT, "спот": Pricing.SPOT,
    "on-demand": Pricing.ON_DEMAND, "ondemand": Pricing.ON_DEMAND, "on_demand": Pricing.ON_DEMAND,
    "od": Pricing.ON_DEMAND, "hourly": Pricing.ON_DEMAND, "почасово": Pricing.ON_DEMAND,
    "почасовая": Pricing.ON_DEMAND,
    "committed": Pricing.COMMITTED, "commit": Pricing.COMMITTED, "commitment": Pricing.COMMITTED,
    "term": Pricing.COMMITTED, "reserved": Pricing.COMMITTED, "reserve": Pricing.COMMITTED,
    "резерв": Pricing.COMMITTED, "срок": Pricing.COMMITTED, "фикс": Pricing.COMMITTED,
}
_PRICING_STEMS: tuple[tuple[str, Pricing], ...] = (
    ("прерываем", Pricing.SPOT), ("фиксированн", Pricing.COMMITTED), ("зарезервир", Pricing.COMMITTED),
    ("резервирован", Pricing.COMMITTED), ("срочн", Pricing.COMMITTED),
)
# pieces/cards/GPUs after a count: the grammar /fit shares (gpu.request_words)
_COUNT_WORDS = UNIT_WORDS
_FILLER = frozenset({"for", "на", "по", "quote", "price", "rent", "please", "аренда", "арендовать",
                     "пожалуйста", "сколько", "стоит", "требованию", "demand", "on", "of", "and", "и", ",",
                     "a", "an", "the"})
_ARTICLES = frozenset({"a", "an"})
# counts of any length and sign: "x0", "x-3" and "x10000" are read, then refused with the limit they break
_COUNT_PREFIX = re.compile(r"^[x×х*]([-−]?\d+)$")
_COUNT_SUFFIX = re.compile(r"^([-−]?\d+)[x×х*]$")
_COUNT_GLUED_BEFORE = re.compile(r"^(\d+)[x×х*](.+)$")
_COUNT_GLUED_AFTER = re.compile(r"^(.+?)[x×х*]([-−]?\d+)$")
_COUNT_KV = re.compile(r"^(?:count|gpus|n|кол-во)=([-−]?\d+)$")
_PRICING_KV = re.compile(r"^(?:pricing|type|тариф)=(.+)$")
_KEY = re.compile(r"(?:^|\s)(?:key|ключ)=(\S*)", re.IGNORECASE)


def pricing_of(word: str) -> Pricing | None:
    word = word.lower()
    if word in _PRICING_WORDS:
        return _PRICING_WORDS[word]
    for stem, pricing in _PRICING_STEMS:
        if word.startswith(stem):
            return pricing
    return None


def split_key(text: str) -> tuple[str, str | None]:
    """Take ``key=VALUE`` out of the text (keys are case-sensitive, so before lower-casing)."""
    match = _KEY.search(text)
    if match is None:
        return text, None
    return (text[: match.start()] + " " + text[match.end():]).strip(), match.group(1)


def parse_quote_text(text: str, catalog: GPUCatalog,
                     default_pricing: Pricing = Pricing.ON_DEMAND,
                     rentable: Sequence[str] | None = None, *, max_gpus: int | None = None) -> ParsedText:
    """Free text -> a validated request (GPU id resolved, count and duration present). ``rentable`` (the
    priced ids) is what "did you mean" offers first: the catalog also describes GPUs that are not rented.
    ``max_gpus`` (the price list's max_gpus_per_quote), when given, refuses a larger count here already;
    without it the engine does, and "from 1 to N" names :data:`DEFAULT_MAX_GPUS`."""
    if not isinstance(text, str):
        raise QuoteInputError("Which GPU? e.g. '/quote h100 x8 2 weeks'.", [], "gpu", "no_gpu")
    if len(text) > MAX_TEXT:
        raise QuoteInputError(f"The request is {len(text)} characters long; keep it under {MAX_TEXT}.", [],
                              "request", "text_too_long", length=len(text), limit=MAX_TEXT)
    find = plural_tolerant(catalog.find)
    body, key = split_key(text)
    body = drop_foreign(body)
    tokens = tokenize(body.replace("по требованию", "on-demand").replace("по-требованию", "on-demand"))
    duration, rest = extract_duration(tokens)
    # "четыре h100", "две 4090", "a pair of h100", "dual 4090": a numeral left over once the duration is out
    # is the GPU count (a bare "a" is only an article here)
    rest = [str(number) if not token.isdecimal() and token not in _ARTICLES
            and (number := count_value(token, weak=True)) is not None else token for token in rest]
    pricing: Pricing | None = None
    count: int | None = None
    name_tokens: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        found_pricing = pricing_of(token)
        kv_pricing = _PRICING_KV.match(token)
        if kv_pricing:
            found_pricing = pricing_of(kv_pricing.group(1))
            if found_pricing is None:
                raise QuoteInputError(f"Unknown pricing '{kv_pricing.group(1)}'; use on-demand, spot or "
                                      "committed.", [p.value for p in Pricing], "pricing", "bad_pricing",
                                      value=kv_pricing.group(1))
        if found_pricing is not None:
            pricing = found_pricing
            i += 1
            continue
        following = rest[i + 1] if i + 1 < len(rest) else ""
        match = _COUNT_PREFIX.match(token) or _COUNT_SUFFIX.match(token) or _COUNT_KV.match(token)
        if match and (number := digits_value(match.group(1))) is not None:
            count = number
            i += 1
            continue
        if token in {"x", "х", "×", "*"} and (number := digits_value(following)) is not None:
            count = number
            i += 2
            continue
        if following in _COUNT_WORDS and (number := digits_value(token)) is not None:
            count = number
            i += 2
            continue
        glued = _COUNT_GLUED_BEFORE.match(token)
        if glued and (number := digits_value(glued.group(1))) is not None and find(glued.group(2)) is not None:
            count = number
            name_tokens.append(glued.group(2))
            i += 1
            continue
        glued = _COUNT_GLUED_AFTER.match(token)
        if glued and (number := digits_value(glued.group(2))) is not None and find(token) is None \
                and find(glued.group(1)) is not None:
            count = number
            name_tokens.append(glued.group(1))
            i += 1
            continue
        if token not in _FILLER and token not in _COUNT_WORDS and any(char.isalnum() for char in token):
            name_tokens.append(token)
        i += 1

    try:
        gpu_id, count = _resolve_gpu(name_tokens, count, catalog, rentable)
    except QuoteInputError as exc:
        # "h100 x8 forever": the GPU is there, the rest is a word we could not read (usually the duration)
        known = _known_prefix(name_tokens, catalog)
        if exc.code != "unknown_gpu" or known is None:
            raise
        words = " ".join(name_tokens[known:])
        raise QuoteInputError(
            f"I did not understand '{words}'. Write the request as GPU, count and duration, e.g. "
            "'/quote h100 x8 2 weeks' (a week is 7 days, a month 30 days).",
            ["2 weeks", "1 month", "3 days"], "duration" if duration is None else "request", "unknown_words",
            words=words) from None
    if duration is None:
        raise QuoteInputError(
            "How long? Add a duration, e.g. '3 hours', '2 weeks', '45 days', '1 month 2 weeks' "
            "(a week is 7 days, a month 30 days).", ["2 weeks", "1 month", "3 days"], "duration",
            "no_duration")
    if not duration.is_positive:
        raise QuoteInputError("The duration must be longer than zero.", [], "duration", "zero_duration")
    request = QuoteRequest(gpu_id=gpu_id, gpu_count=count if count is not None else 1, duration=duration,
                           pricing=pricing or default_pricing)
    limit = max_gpus if max_gpus is not None else DEFAULT_MAX_GPUS
    if request.gpu_count < 1 or (max_gpus is not None and request.gpu_count > max_gpus):
        raise QuoteInputError(f"The number of GPUs must be between 1 and {limit} for an automatic quote; for "
                              "more, please contact sales.", [], "gpu_count", "bad_count", max=limit)
    return ParsedText(request=request, key=key)


def _known_prefix(name_tokens: list[str], catalog: GPUCatalog) -> int | None:
    """How many leading tokens name a catalog GPU exactly, when some words follow them."""
    find = plural_tolerant(catalog.find)
    for end in range(len(name_tokens) - 1, 0, -1):
        if find(" ".join(name_tokens[:end])) is not None:
            return end
    return None


def _resolve_gpu(name_tokens: list[str], count: int | None, catalog: GPUCatalog,
                 rentable: Sequence[str] | None = None) -> tuple[str, int | None]:
    known = list(rentable) if rentable is not None else catalog.ids()
    if not name_tokens:
        raise QuoteInputError("Which GPU? e.g. '/quote h100 x8 2 weeks'.", known, "gpu", "no_gpu")
    find: Callable[[str], GPUSpec | None] = plural_tolerant(catalog.find)
    spec = find(" ".join(name_tokens))
    if spec is not None:
        return spec.id, count
    # "8 h100 ..." or "h100 8 ...": a bare number next to the name is the GPU count
    if count is None and len(name_tokens) > 1:
        for number, others in ((name_tokens[0], name_tokens[1:]), (name_tokens[-1], name_tokens[:-1])):
            value = digits_value(number)
            if value is not None:
                spec = find(" ".join(others))
                if spec is not None:
                    return spec.id, value
    text = " ".join(name_tokens)
    try:
        return catalog.resolve(text).id, count
    except UnknownNameError as exc:
        # rented GPUs first: "h1000" is far more likely the H100 we rent than the H100 NVL we only describe
        offered = sorted(exc.suggestions, key=lambda gpu_id: gpu_id not in known)
        hint = f" Did you mean: {', '.join(offered)}?" if offered else ""
        raise QuoteInputError(f"Unknown GPU '{text}'.{hint} Known: {', '.join(known)}.",
                              offered or known, "gpu", "unknown_gpu", name=text) from None


def parse_duration_or_error(text: str) -> Duration:
    """For the guided flow: a typed duration, or a :class:`QuoteInputError` with examples."""
    try:
        return parse_duration(text)
    except DurationError as exc:
        raise QuoteInputError(str(exc), ["2 weeks", "1 month", "45 days"], "duration", "bad_duration",
                              text=text.strip()) from None
