"""How people write "which GPU and how many" — one grammar for /fit and /quote. Pure.

    h200 x4 · h200x4 · h200 × 4 · 4x h200 · 4xh200 · 4×H200 · 4 h200 · h200 4 шт · h200 4 cards
    четыре h100 · две 4090 · 2 карты 4090 · на одной 3090 · on two a100

Tokens come in lower-cased and split on spaces (each parser has its own tokenizer); a GPU name may span
up to three tokens ("rtx 6000 ada"). The catalog lookup is passed in, so this module knows no data file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Spec = TypeVar("Spec")

# Numerals a count is written with, in the cases a sentence puts them in ("на двух", "в четырёх").
COUNT_WORDS: dict[str, int] = {
    "one": 1, "a": 1, "single": 1, "один": 1, "одна": 1, "одну": 1, "одной": 1, "одном": 1, "одного": 1,
    "two": 2, "pair": 2, "два": 2, "две": 2, "двух": 2, "двумя": 2, "пара": 2, "пару": 2,
    "three": 3, "три": 3, "трёх": 3, "трех": 3, "тремя": 3,
    "four": 4, "четыре": 4, "четырёх": 4, "четырех": 4, "четырьмя": 4,
    "five": 5, "пять": 5, "пяти": 5, "six": 6, "шесть": 6, "шести": 6,
    "eight": 8, "восемь": 8, "восьми": 8, "ten": 10, "десять": 10, "десяти": 10,
    "twelve": 12, "двенадцать": 12, "sixteen": 16, "шестнадцать": 16, "шестнадцати": 16,
    "thirty-two": 32, "тридцать два": 32,
}
# "a" counts only right before a GPU name ("on a 4090"), never as a free-standing word.
_WEAK_COUNT_WORDS = frozenset({"a", "single", "pair"})
TIMES = frozenset({"x", "х", "×", "*"})  # Latin x, Cyrillic х, the multiplication sign
# What may stand between a count and the GPU, or after "GPU count": pieces, cards, GPUs.
UNIT_WORDS = frozenset({
    "шт", "шт.", "штук", "штуки", "штука", "pcs", "pc", "pieces", "units", "gpu", "gpus", "гпу", "card",
    "cards", "карта", "карты", "карт", "карте", "картах", "картами", "картой", "видеокарта", "видеокарты",
    "видеокарт", "видеокартах", "видеокартами", "x", "х", "×",
})
_GLUED_BEFORE = re.compile(r"^(\d{1,3})[x×х*](.+)$")  # 4xh200, 4×h200
_GLUED_AFTER = re.compile(r"^(.+?)[x×х*](\d{1,3})$")  # h200x4
_TIMES_COUNT = re.compile(r"^[x×х*](\d{1,3})$")  # x4
_COUNT_TIMES = re.compile(r"^(\d{1,3})[x×х*]$")  # 4x


def count_value(token: str, *, weak: bool = False) -> int | None:
    """A count written as digits (at most three) or as a numeral word; ``weak`` admits "a"/"pair"."""
    if token.isdecimal() and len(token) <= 3:
        return int(token)
    if token in _WEAK_COUNT_WORDS and not weak:
        return None
    return COUNT_WORDS.get(token)


@dataclass(frozen=True)
class GpuMention(Generic[Spec]):
    """A GPU named in tokens[start:end], with the count written next to it (None: no count given)."""

    gpu: Spec
    count: int | None
    start: int
    end: int


def gpu_span(tokens: Sequence[str], index: int, find: Callable[[str], Spec | None],
             first: str | None = None) -> tuple[Spec, int] | None:
    """The longest GPU name (up to three tokens) starting at ``index``; ``first`` replaces its first word."""
    if index >= len(tokens):
        return None
    head = tokens[index] if first is None else first
    for width in (3, 2, 1):
        if index + width <= len(tokens):
            spec = find(" ".join([head, *tokens[index + 1:index + width]]))
            if spec is not None:
                return spec, index + width
    return None


def _trailing_count(tokens: Sequence[str], end: int) -> tuple[int, int] | None:
    """ "x4", "x 4", "× 4", "4 шт", "4 cards" right after a GPU name: (count, next index)."""
    if end >= len(tokens):
        return None
    token = tokens[end]
    following = tokens[end + 1] if end + 1 < len(tokens) else ""
    match = _TIMES_COUNT.match(token)
    if match:
        return int(match.group(1)), end + 1
    if token in TIMES and (count := count_value(following)) is not None:
        return count, end + 2
    count = count_value(token)
    if count is not None and following in UNIT_WORDS:
        return count, end + 2
    return None


def read_gpu(tokens: Sequence[str], index: int, find: Callable[[str], Spec | None]) -> GpuMention[Spec] | None:
    """A GPU named at ``tokens[index]``, with a count before it ("4x h200", "две 4090", "2 карты 4090")
    or after it ("h200 x4", "h200 4 шт"). None when no GPU name starts here."""
    token = tokens[index]
    # a count first: "4 h200", "4 x h200", "4x h200", "четыре h100", "2 карты 4090"
    count = count_value(token, weak=True)
    match = _COUNT_TIMES.match(token)
    if match:
        count = int(match.group(1))
    if count is not None:
        j = index + 1
        if j < len(tokens) and tokens[j] in TIMES:
            j += 1
        if j < len(tokens) and tokens[j] in UNIT_WORDS:
            j += 1
        span = gpu_span(tokens, j, find)
        if span is not None:
            return GpuMention(span[0], count, index, span[1])
    glued = _GLUED_BEFORE.match(token)
    if glued:  # "4xh200", "4×rtx" + "4090"
        span = gpu_span(tokens, index, find, first=glued.group(2))
        if span is not None:
            return GpuMention(span[0], int(glued.group(1)), index, span[1])
    span = gpu_span(tokens, index, find)
    if span is None:
        glued = _GLUED_AFTER.match(token)
        spec = find(glued.group(1)) if glued else None
        if glued and spec is not None:  # "h200x4"
            return GpuMention(spec, int(glued.group(2)), index, index + 1)
        return None
    spec, end = span
    trailing = _trailing_count(tokens, end)
    if trailing is not None:
        return GpuMention(spec, trailing[0], index, trailing[1])
    return GpuMention(spec, None, index, end)
