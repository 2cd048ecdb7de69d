"""How people write "which GPU and how many" — one grammar for /fit and /quote. Pure.

    h200 x4 · h200x4 · h200 × 4 · 4x h200 · 4xh200 · 4×H200 · 4 h200 · h200 4 шт · h200 4 cards
    четыре h100 · две 4090 · 2 карты 4090 · на одной 3090 · на паре 4090 · на 4-х картах h100
    on two a100s · a pair of 4090s · dual 3090 · 10,000 h100 (read, then refused by the range check)
    a100 на 40 гб · a100 with 40gb · a 24gb card · карта на 24 гб · две карты по 24 гб · влезет ли в 24 гб

Tokens come in lower-cased and split on spaces (each parser has its own tokenizer); a GPU name may span
up to three tokens ("rtx 6000 ada"). The catalog lookup is passed in, so this module knows no data file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Spec = TypeVar("Spec")

# Numerals a count is written with, in every case a sentence puts them in ("на двух", "в четырёх", "паре").
# Russian numerals are a closed class: each value lists its whole declension, never a sentence's words.
_RU_NUMERALS: dict[int, tuple[str, ...]] = {
    1: ("один", "одна", "одно", "одну", "одной", "одном", "одного", "одним", "одни", "одних"),
    2: ("два", "две", "двух", "двум", "двумя", "двое", "двоих", "пара", "пару", "паре", "парой", "пары"),
    3: ("три", "трёх", "трех", "трём", "трем", "тремя", "трое", "троих"),
    4: ("четыре", "четырёх", "четырех", "четырём", "четырем", "четырьмя", "четверо", "четверых"),
    5: ("пять", "пяти", "пятью"), 6: ("шесть", "шести", "шестью"), 7: ("семь", "семи", "семью"),
    8: ("восемь", "восьми", "восемью", "восьмью"), 9: ("девять", "девяти", "девятью"),
    10: ("десять", "десяти", "десятью"), 12: ("двенадцать", "двенадцати"),
    16: ("шестнадцать", "шестнадцати"), 32: ("тридцать два", "тридцати двух"),
}
# collective nouns a team says a server's GPUs with («восьмёрка h100», «четвёрку a100»): a count only right before
# a GPU name (elsewhere «тройка» or «пятёрка» is a ranking or a grade)
_RU_COLLECTIVE: dict[int, str] = {2: "двойк", 3: "тройк", 4: "четв[её]рк", 5: "пят[её]рк", 6: "шест[её]рк",
                                  8: "восьм[её]рк"}
_RU_COLLECTIVE_FORMS: dict[str, int] = {
    stem.replace("[её]", e) + ending: value for value, stem in _RU_COLLECTIVE.items() for e in "её"
    for ending in ("а", "у", "и", "ой", "е")}
_EN_NUMERALS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "twelve": 12, "sixteen": 16, "thirty-two": 32,
    # words that are a count only right before a GPU name ("on a 4090", "a pair of", "dual 3090")
    "a": 1, "an": 1, "single": 1, "pair": 2, "couple": 2, "dual": 2, "twin": 2, "quad": 4,
}
COUNT_WORDS: dict[str, int] = {
    **_EN_NUMERALS, **{form: value for value, forms in _RU_NUMERALS.items() for form in forms},
    **_RU_COLLECTIVE_FORMS,
}
# "a" counts only right before a GPU name ("on a 4090"), never as a free-standing word.
_WEAK_COUNT_WORDS = frozenset({"a", "an", "single", "pair", "couple", "dual", "twin", "quad", *_RU_COLLECTIVE_FORMS})
# What may stand between a count word and the GPU: "a pair of 4090s", "two of the h100".
_COUNT_LINKS = frozenset({"of", "из"})
TIMES = frozenset({"x", "х", "×", "*"})  # Latin x, Cyrillic х, the multiplication sign
# What may stand between a count and the GPU, or after "GPU count": pieces, cards, GPUs.
UNIT_WORDS = frozenset({
    "шт", "шт.", "штук", "штуки", "штука", "pcs", "pc", "pieces", "units", "gpu", "gpus", "гпу", "card",
    "cards", "карта", "карты", "карт", "карте", "картах", "картами", "картой", "видеокарта", "видеокарты",
    "видеокарт", "видеокартах", "видеокартами", "x", "х", "×",
})
# A sign and at most 18 digits: int() stays fast, and a count that long is only ever "too many".
_SIGNED_DIGITS = re.compile(r"^[-−]?\d+$")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")  # "10,000" (a count is never a fraction)
# "4-х", "2-мя", "8-ми": digits with a Russian case ending
_DIGITS_CASE = re.compile(r"^(\d{1,3})-?(х|ех|ёх|ух|ох|ми|мя|ти|и|й|ой|ый|ем|ём|м|ю)$")  # "4-х", "2мя", "2ух"
TOO_MANY = 10 ** 18  # what a count of more than 18 digits reads as: refused by every range check
_GLUED_BEFORE = re.compile(r"^(\d+)[x×х*](.+)$")  # 4xh200, 4×h200
_GLUED_AFTER = re.compile(r"^(.+?)[x×х*]([-−]?\d+)$")  # h200x4, h200x-1
_TIMES_COUNT = re.compile(r"^[x×х*]([-−]?\d+)$")  # x4
_COUNT_TIMES = re.compile(r"^([-−]?\d+)[x×х*]$")  # 4x
_NAME_ENDING = re.compile(r"(?:['’]?s|-[а-яё]{1,3})$")  # "a100s", "h100's", "4090-х", "a100-ых"
# Letters of the alphabets the bot reads; anything else in a letter's place (CJK, Arabic, emoji) is noise.
_FOREIGN = re.compile(r"[^\x00-\u024f\u0400-\u04ff\u2010-\u2015\u2212\u00d7«»“”„‘’№]")


def digits_value(token: str) -> int | None:
    """A whole number written with digits ("8", "-3", "10,000"); more than 18 digits reads as TOO_MANY."""
    if _THOUSANDS.match(token):
        token = token.replace(",", "")
    if not _SIGNED_DIGITS.match(token):
        return None
    negative = token[0] in "-−"
    digits = token.lstrip("-−")
    if not digits.isdecimal():  # "¹" and other digits int() refuses
        return None
    value = TOO_MANY if len(digits) > 18 else int(digits)
    return -value if negative else value


def count_value(token: str, *, weak: bool = False) -> int | None:
    """A count written as digits ("8", "-3", "10,000", "4-х") or as a numeral word in any case ("двух",
    "паре"); ``weak`` also admits the words that are a count only right before a GPU ("a", "pair", "dual")."""
    value = digits_value(token)
    if value is not None:
        return value
    match = _DIGITS_CASE.match(token)
    if match:
        return int(match.group(1))
    if token in _WEAK_COUNT_WORDS and not weak:
        return None
    return COUNT_WORDS.get(token)


def drop_foreign(text: str) -> str:
    """Text with every character outside Latin, Cyrillic, digits and common punctuation made a space:
    "能在H100上运行吗" -> " H100 ", an emoji-only message -> blanks. Both parsers then explain what they lack."""
    return _FOREIGN.sub(" ", text)


def plural_tolerant(find: Callable[[str], Spec | None]) -> Callable[[str], Spec | None]:
    """``find`` that also reads a name with a plural or case ending: "a100s", "h100's", "4090-х"."""
    def lookup(text: str) -> Spec | None:
        spec = find(text)
        if spec is not None:
            return spec
        stem = _NAME_ENDING.sub("", text)
        return find(stem) if stem != text and len(stem) > 1 else None
    return lookup


@dataclass(frozen=True)
class GpuMention(Generic[Spec]):
    """A GPU named in tokens[start:end], with the count written next to it (None: no count given)."""

    gpu: Spec
    count: int | None
    start: int
    end: int


# A memory size said instead of, or after, a GPU's name: "24gb", "24 гб", "24 гига"
_GB_GLUED = re.compile(r"^(\d{1,3})(?:gb|гб|gib|гиб|гиг|гига|гигов|g|gigs?)$")
_GB_UNITS = frozenset({"gb", "гб", "gib", "гиб", "гиг", "гига", "гигов", "гигабайт", "гигабайта", "гигабайтами",
                       "gig", "gigs", "gigabytes", "гигабайтов"})
# what a memory size is said of: "a 24gb card", «карта на 24 гб», "24 гб видеопамяти", "24gb of vram"
_CARD_WORDS = UNIT_WORDS - {"x", "х", "×"} | frozenset({
    "карту", "карточка", "карточке", "карточку", "видеокарте", "видеокарту", "vram", "врам", "видеопамяти",
    "видеопамять", "graphics"})
# what links a GPU or a card to its memory ("a100 на 40 гб", "card with 24gb"), or a model to it ("в 24 гб")
_MEMORY_LINKS = frozenset({"на", "с", "со", "with", "w/", "of", "by"})
_EACH = frozenset({"по", "each"})  # «2 a100 по 40»: the memory of each card
_TIME_WORD = re.compile(r"(?i)^(ч|час|h|hr|hour|мин|min|дн|день|day|сут|недел|week|wk|месяц|мес|month|год|year)")
_INTO_LINKS = frozenset({"в", "во", "into", "in", "on", "на", "по"})  # "по": «2 карты по 24 гб»
# "is 24gb enough", «хватит ли 80 гигов», «24 гига хватит»: the memory one has
_ENOUGH = frozenset({"enough", "хватит", "хватает", "хватило", "достаточно"})
# "у меня есть 24 гига", "i have 24gb", "we've got 48 gb": the memory one has, of a card unless another store follows
_HAVE = frozenset({"есть", "имеется", "have", "got", "имею"})
_NOT_VRAM = re.compile(r"(?i)^(оператив|озу|ram|диск|disk|ssd|hdd|nvme|data|данн|датасет|dataset|storag|хранил)")
_POSSESSIVES = frozenset({"мои", "мой", "мою", "моих", "моей", "наши", "наш", "нашу", "наших", "my", "our"})
CARD_OF = "{gb}gb card"  # how a memory size alone is looked up (gpu.catalog: the catalog's first GPU of it)


def _bare_memory(tokens: Sequence[str], link: int) -> tuple[int, int] | None:
    """«2 a100 по 40»: a number with no unit after "по" (each) is the memory of one card, unless a time follows
    it («по 80 часов»); the caller keeps it only when the GPU has a variant of that memory."""
    number = link + 1
    if tokens[link] not in _EACH or number >= len(tokens) or not tokens[number].isdigit() \
            or len(tokens[number]) > 3:
        return None
    following = tokens[number + 1] if number + 1 < len(tokens) else ""
    return None if _TIME_WORD.match(following) else (int(tokens[number]), number + 1)


def _memory(tokens: Sequence[str], index: int) -> tuple[int, int] | None:
    """A memory size at ``tokens[index]``: (gigabytes, the index after it)."""
    if index >= len(tokens):
        return None
    glued = _GB_GLUED.match(tokens[index])
    if glued:
        return int(glued.group(1)), index + 1
    if tokens[index].isdigit() and len(tokens[index]) <= 3 and index + 1 < len(tokens) and (
            tokens[index + 1] in _GB_UNITS):
        return int(tokens[index]), index + 2
    return None


def _memory_card(tokens: Sequence[str], index: int, find: Callable[[str], Spec | None]) -> tuple[Spec, int] | None:
    """A card named by its memory alone: "24gb card", "24 гб видеопамяти", «карта на 24 гб», "card with
    24gb", and a size a model is put into at the end of a question («влезет ли llama 8b в 24 гб»)."""
    size = _memory(tokens, index)
    if size is not None and size[1] < len(tokens) and tokens[size[1]] in _ENOUGH:  # "is 24gb enough"
        spec = find(CARD_OF.format(gb=size[0]))
        return (spec, size[1] + 1) if spec is not None else None
    if tokens[index] in _HAVE:  # «у меня есть 24 гига», "i have 24gb"
        size = _memory(tokens, index + 1)
        after = size[1] + (size[1] < len(tokens) and tokens[size[1]] == "of") if size is not None else 0
        if size is None or (after < len(tokens) and _NOT_VRAM.match(tokens[after])):
            return None  # «есть 64 гб оперативки»: not a card
        spec = find(CARD_OF.format(gb=size[0]))
        return (spec, size[1]) if spec is not None else None
    if tokens[index] in _ENOUGH:  # «хватит ли 80 гигов»
        size = _memory(tokens, index + 1 + (index + 1 < len(tokens) and tokens[index + 1] == "ли"))
        spec = find(CARD_OF.format(gb=size[0])) if size is not None else None
        return (spec, size[1]) if size is not None and spec is not None else None
    if size is not None and size[1] < len(tokens) and tokens[size[1]] in _CARD_WORDS:  # "24gb card"
        end = size[1] + 1 + (size[1] + 1 < len(tokens) and tokens[size[1] + 1] in ("of", "vram"))
        spec = find(CARD_OF.format(gb=size[0]))
        return (spec, end) if spec is not None else None
    start = index
    if tokens[index] in _CARD_WORDS:  # «карта на 24 гб», "card with 24gb", «карте 24gb»
        start = index + 1 + (index + 1 < len(tokens) and tokens[index + 1] in _MEMORY_LINKS | {"по"})
    elif tokens[index] in _INTO_LINKS:  # «в 24 гб»: a size a model goes into, said last
        start = index + 1 + (index + 1 < len(tokens) and tokens[index + 1] in _POSSESSIVES)  # «в мои 12 гб»
    else:
        return None
    size = _memory(tokens, start)
    # «в 24 гб» is a size a model goes into when said last; «в мои 12 гб» (a possessive) wherever it is said
    owned = tokens[index] in _INTO_LINKS and start == index + 2
    if size is None or (tokens[index] in _INTO_LINKS and not owned and size[1] < len(tokens)
                        and tokens[size[1]] not in _CARD_WORDS):
        return None
    end = size[1] + (size[1] < len(tokens) and tokens[size[1]] in _CARD_WORDS)
    spec = find(CARD_OF.format(gb=size[0]))
    return (spec, end) if spec is not None else None


def gpu_span(tokens: Sequence[str], index: int, find: Callable[[str], Spec | None],
             first: str | None = None) -> tuple[Spec, int] | None:
    """The longest GPU name (up to three tokens) starting at ``index``, with the memory said after it
    ("a100 на 40 гб" is the A100 40GB); ``first`` replaces its first word. A card named by its memory alone
    ("a 24gb card") is the catalog's first GPU of that memory."""
    if index >= len(tokens):
        return None
    head = tokens[index] if first is None else first
    for width in (3, 2, 1):
        if index + width <= len(tokens):
            name = " ".join([head, *tokens[index + 1:index + width]])
            spec = find(name)
            if spec is not None:
                end = index + width
                if end < len(tokens) and tokens[end] in _MEMORY_LINKS | _EACH:
                    size = _memory(tokens, end + 1) or _bare_memory(tokens, end)
                    variant = find(f"{name} {size[0]}gb") if size is not None else None
                    if size is not None and variant is not None:
                        return variant, size[1]
                return spec, end
    return _memory_card(tokens, index, find) if first is None else None


def _trailing_count(tokens: Sequence[str], end: int) -> tuple[int, int] | None:
    """ "x4", "x 4", "× 4", "4 шт", "4 cards" right after a GPU name: (count, next index)."""
    if end >= len(tokens):
        return None
    token = tokens[end]
    following = tokens[end + 1] if end + 1 < len(tokens) else ""
    match = _TIMES_COUNT.match(token)
    if match and (count := digits_value(match.group(1))) is not None:
        return count, end + 1
    if token in TIMES and (count := count_value(following)) is not None:
        return count, end + 2
    count = count_value(token)
    if count is not None and following in UNIT_WORDS:
        return count, end + 2
    return None


def read_gpu(tokens: Sequence[str], index: int, find: Callable[[str], Spec | None]) -> GpuMention[Spec] | None:
    """A GPU named at ``tokens[index]``, with a count before it ("4x h200", "две 4090", "2 карты 4090",
    "a pair of 4090s") or after it ("h200 x4", "h200 4 шт"). None when no GPU name starts here."""
    token = tokens[index]
    # a count first: "4 h200", "4 x h200", "4x h200", "четыре h100", "2 карты 4090"
    count = count_value(token, weak=True)
    match = _COUNT_TIMES.match(token)
    if match:
        count = digits_value(match.group(1))
    if count is not None and match is None and token.isdigit() and find(token) is not None:
        count = None  # "3090 4090 5090" (commas dropped): a GPU's own number is no count of the next one
    if count is not None:
        j = index + 1
        if j < len(tokens) and tokens[j] in _COUNT_LINKS:
            j += 1
        if j < len(tokens) and tokens[j] in TIMES:
            j += 1
        if j < len(tokens) and tokens[j] in UNIT_WORDS:
            j += 1
        span = gpu_span(tokens, j, find)
        if span is not None:
            return GpuMention(span[0], count, index, span[1])
    glued = _GLUED_BEFORE.match(token)
    glued_count = digits_value(glued.group(1)) if glued else None
    if glued and glued_count is not None:  # "4xh200", "4×rtx" + "4090"
        span = gpu_span(tokens, index, find, first=glued.group(2))
        if span is not None:
            return GpuMention(span[0], glued_count, index, span[1])
    span = gpu_span(tokens, index, find)
    if span is None:
        glued = _GLUED_AFTER.match(token)
        spec = find(glued.group(1)) if glued else None
        glued_count = digits_value(glued.group(2)) if glued else None
        if spec is not None and glued_count is not None:  # "h200x4"
            return GpuMention(spec, glued_count, index, index + 1)
        return None
    spec, end = span
    trailing = _trailing_count(tokens, end)
    if trailing is not None:
        return GpuMention(spec, trailing[0], index, trailing[1])
    return GpuMention(spec, None, index, end)
