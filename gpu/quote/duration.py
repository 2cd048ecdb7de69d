"""Rental durations typed by people, in Russian or English: "3 hours", "2 недели", "1 month 2 weeks", "45d".

Company rule: a week is exactly 7 days and a month exactly 30 days, so every duration is an exact number
of hours (``Decimal``). Numbers may be digits ("1.5", "1,5"), or words ("a week", "две недели"). A year is
read as 365 days and kept as days ("2 years" -> 730 days), so the quote shows what it prices; a sign is
read too ("-3 days"), so that the parsers can refuse it as a duration rather than as an unknown word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from enum import Enum


class Unit(Enum):
    MINUTE = "minute"
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"


HOURS_PER_UNIT: dict[Unit, Decimal] = {
    Unit.HOUR: Decimal(1),
    Unit.DAY: Decimal(24),
    Unit.WEEK: Decimal(7 * 24),
    Unit.MONTH: Decimal(30 * 24),
}



def hours_of(amount: Decimal, unit: Unit) -> Decimal:
    # minutes divide (60 minutes is exactly 1 hour, never 1.0000...2)
    return amount / 60 if unit is Unit.MINUTE else amount * HOURS_PER_UNIT[unit]


# Short forms need a number in front ("3h"); full words may stand alone ("a week", "неделя").
# A bare "m" is refused on purpose: minutes or months?
_SHORT_UNITS: dict[str, Unit] = {
    "min": Unit.MINUTE, "mins": Unit.MINUTE, "мин": Unit.MINUTE,
    "h": Unit.HOUR, "hr": Unit.HOUR, "hrs": Unit.HOUR, "ч": Unit.HOUR,
    "d": Unit.DAY, "д": Unit.DAY, "дн": Unit.DAY, "сут": Unit.DAY,
    "w": Unit.WEEK, "wk": Unit.WEEK, "wks": Unit.WEEK, "нед": Unit.WEEK,
    "mo": Unit.MONTH, "mon": Unit.MONTH, "mos": Unit.MONTH, "мес": Unit.MONTH, "mth": Unit.MONTH,
}
_WORD_UNITS: dict[str, Unit] = {
    "minute": Unit.MINUTE, "minutes": Unit.MINUTE,
    "hour": Unit.HOUR, "hours": Unit.HOUR,
    "day": Unit.DAY, "days": Unit.DAY,
    "week": Unit.WEEK, "weeks": Unit.WEEK,
    "month": Unit.MONTH, "months": Unit.MONTH,
    "день": Unit.DAY, "дня": Unit.DAY, "дней": Unit.DAY, "дню": Unit.DAY, "днём": Unit.DAY,
    "днем": Unit.DAY, "сутки": Unit.DAY, "суток": Unit.DAY,
}
# Russian stems cover every case form: "неделя/недели/недель/неделю", "месяц/месяца/месяцев", ...
_RU_STEMS: tuple[tuple[str, Unit], ...] = (
    ("минут", Unit.MINUTE), ("час", Unit.HOUR), ("недел", Unit.WEEK), ("месяц", Unit.MONTH),
)
# «час» is also the start of «часть», «часто», «частота», «частично»: only its own forms are the hour
_HOUR_ENDINGS = frozenset({"", "а", "ов", "у", "ам", "ами", "ах", "ом", "ик", "ика", "иков", "ок", "ка", "ки"})
_NUMBER_WORDS: dict[str, Decimal] = {
    "a": Decimal(1), "an": Decimal(1), "one": Decimal(1), "two": Decimal(2), "three": Decimal(3),
    "four": Decimal(4), "five": Decimal(5), "six": Decimal(6), "seven": Decimal(7), "eight": Decimal(8),
    "nine": Decimal(9), "ten": Decimal(10), "eleven": Decimal(11), "twelve": Decimal(12),
    "half": Decimal("0.5"),
    "один": Decimal(1), "одна": Decimal(1), "одну": Decimal(1), "одни": Decimal(1), "одних": Decimal(1),
    "два": Decimal(2), "две": Decimal(2), "двое": Decimal(2), "трое": Decimal(3), "три": Decimal(3),
    "четыре": Decimal(4), "пять": Decimal(5), "шесть": Decimal(6), "семь": Decimal(7),
    "восемь": Decimal(8), "девять": Decimal(9), "десять": Decimal(10), "полтора": Decimal("1.5"),
    "полторы": Decimal("1.5"), "пару": Decimal(2), "пара": Decimal(2), "couple": Decimal(2),
}
# Years are not a billing unit: each is 365 days ("на год", "for 2 years", "500 лет").
DAYS_PER_YEAR = 365
_YEAR_WORDS = frozenset({"year", "years", "yr", "yrs", "год", "года", "году", "годом", "годы", "лет"})
# Whole durations written as one word: "полгода" (half a year is six 30-day months, as people mean it).
_WHOLE_WORDS: dict[str, tuple[Decimal, Unit]] = {"полгода": (Decimal(6), Unit.MONTH)}
# Words that may sit between or around the parts of a duration and mean nothing for its length.
CONNECTORS = frozenset({"and", "plus", "+", ",", "и", "for", "на", "в", "течение", "of"})

# a sign (read so that "-3 days" is refused as a duration) and up to 15 digits: absurd, yet a number
_NUMBER = re.compile(r"^[-−]?\d{1,15}(?:[.,]\d{1,4})?$")
_GLUED = re.compile(r"^([-−]?\d{1,15}(?:[.,]\d{1,4})?)([a-zа-яё]+)$")
_OF = frozenset({"of"})  # "a couple of days"
_TOKEN = re.compile(r"\d+,\d+[^\s,;+]*|[^\s,;+]+|[,;+]")  # "1,5" is a decimal, "1, 2" a list


class DurationError(ValueError):
    """A duration that cannot be read; the message says what was expected."""


@dataclass(frozen=True)
class Duration:
    parts: tuple[tuple[Decimal, Unit], ...]

    @property
    def hours(self) -> Decimal:
        return sum((hours_of(amount, unit) for amount, unit in self.parts), Decimal(0))

    @property
    def billable_hours(self) -> int:
        """Whole hours billed: every started hour counts, at least one."""
        return max(1, int(self.hours.to_integral_value(rounding=ROUND_CEILING)))

    def describe(self, lang: str = "en") -> str:
        return " ".join(format_amount(amount, unit, lang) for amount, unit in self.parts)

    @property
    def is_positive(self) -> bool:
        """Longer than zero with no part below zero: "1 month -3 days" is refused, not read as 27 days."""
        return self.hours > 0 and all(amount >= 0 for amount, _ in self.parts)

    @classmethod
    def of_hours(cls, hours: int | Decimal) -> Duration:
        """The most readable exact spelling of a number of hours: 1056 -> "1 month 2 weeks"."""
        remaining = Decimal(hours)
        parts: list[tuple[Decimal, Unit]] = []
        for unit in (Unit.MONTH, Unit.WEEK, Unit.DAY):
            size = HOURS_PER_UNIT[unit]
            whole = int(remaining // size)
            if whole:
                parts.append((Decimal(whole), unit))
                remaining -= whole * size
        if remaining or not parts:
            parts.append((remaining.normalize() if remaining else Decimal(0), Unit.HOUR))
        return cls(tuple(parts))


_EN_NAMES = {Unit.MINUTE: ("minute", "minutes"), Unit.HOUR: ("hour", "hours"), Unit.DAY: ("day", "days"),
             Unit.WEEK: ("week", "weeks"), Unit.MONTH: ("month", "months")}
# one / few (2-4) / many / fraction (genitive singular: "1,5 недели")
_RU_NAMES = {Unit.MINUTE: ("минута", "минуты", "минут", "минуты"),
             Unit.HOUR: ("час", "часа", "часов", "часа"),
             Unit.DAY: ("день", "дня", "дней", "дня"),
             Unit.WEEK: ("неделя", "недели", "недель", "недели"),
             Unit.MONTH: ("месяц", "месяца", "месяцев", "месяца")}


def _plain(amount: Decimal) -> str:
    text = format(amount.normalize(), "f")
    return text


def format_amount(amount: Decimal, unit: Unit, lang: str = "en") -> str:
    number = _plain(amount)
    if lang == "ru":
        one, few, many, fraction = _RU_NAMES[unit]
        if amount != amount.to_integral_value():
            return f"{number.replace('.', ',')} {fraction}"
        n = int(amount)
        if n % 10 == 1 and n % 100 != 11:
            word = one
        elif 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            word = few
        else:
            word = many
        return f"{number} {word}"
    singular, plural = _EN_NAMES[unit]
    return f"{number} {singular if amount == 1 else plural}"


def unit_of(word: str, *, after_number: bool) -> Unit | None:
    """The unit a word names; short forms ("h", "нед") count only right after a number."""
    word = word.lower().rstrip(".")
    if word in _WORD_UNITS:
        return _WORD_UNITS[word]
    for stem, unit in _RU_STEMS:
        if word.startswith(stem) and (stem != "час" or word[len(stem):] in _HOUR_ENDINGS):
            return unit
    if after_number:
        return _SHORT_UNITS.get(word)
    return None


def number_of(word: str) -> Decimal | None:
    word = word.lower()
    if _NUMBER.match(word):
        try:
            return Decimal(word.replace(",", ".").replace("−", "-"))
        except InvalidOperation:
            return None
    return _NUMBER_WORDS.get(word)


def _part(amount: Decimal, word: str, *, after_number: bool) -> tuple[Decimal, Unit] | None:
    """``amount`` of the unit ``word`` names, years turned into days; None when ``word`` is no unit."""
    if word.lower().rstrip(".") in _YEAR_WORDS:
        return amount * DAYS_PER_YEAR, Unit.DAY
    unit = unit_of(word, after_number=after_number)
    return None if unit is None else (amount, unit)


def duration_part(tokens: Sequence[str], index: int) -> tuple[Decimal, Unit, int] | None:
    """One duration part starting at ``tokens[index]``: (amount, unit, index after it), or None.

    NUMBER UNIT ("2 weeks", "две недели", "a couple of days"), a glued NUMBERUNIT ("45d", "3ч"), or a
    full unit word alone ("week", "сутки", "год" = 1; "полгода" = 6 months)."""
    token = tokens[index]
    if token in ("a", "an") and index + 1 < len(tokens) and tokens[index + 1] == "couple":
        index, token = index + 1, "couple"  # "a couple of days"
    if token in _WHOLE_WORDS:
        amount, unit = _WHOLE_WORDS[token]
        return amount, unit, index + 1
    glued = _GLUED.match(token)
    glued_amount = number_of(glued.group(1)) if glued else None
    if glued and glued_amount is not None:
        part = _part(glued_amount, glued.group(2), after_number=True)
        if part is not None:
            return part[0], part[1], index + 1
    number = number_of(token)
    if number is not None:
        nxt = index + 1
        if nxt + 1 < len(tokens) and tokens[nxt] in _OF:
            nxt += 1
        part = _part(number, tokens[nxt], after_number=True) if nxt < len(tokens) else None
        if part is not None:
            return part[0], part[1], nxt + 1
    part = _part(Decimal(1), token, after_number=False)
    return None if part is None else (part[0], part[1], index + 1)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("ё", "е"))


def extract_duration(tokens: Sequence[str]) -> tuple[Duration | None, list[str]]:
    """Take every duration part out of ``tokens``; returns the duration (or None) and the other tokens.

    A part is NUMBER UNIT ("2 weeks", "две недели"), a glued NUMBERUNIT ("45d", "3ч") or a full unit
    word alone ("week", "сутки" = 1). Connectors between parts ("and", "и", ",") are dropped with them.
    """
    parts: list[tuple[Decimal, Unit]] = []
    rest: list[str] = []
    i = 0
    while i < len(tokens):
        found = duration_part(tokens, i)
        if found is not None:
            amount, unit, i = found
            parts.append((amount, unit))
            continue
        rest.append(tokens[i])
        i += 1
    if not parts:
        return None, rest
    # connectors only meant something next to the duration; keep them out of the GPU name
    rest = [token for token in rest if token not in CONNECTORS]
    return Duration(tuple(parts)), rest


def parse_duration(text: str) -> Duration:
    """A whole string that must be a duration; raises :class:`DurationError` otherwise."""
    duration, rest = extract_duration(tokenize(text))
    leftovers = [token for token in rest if token not in CONNECTORS]
    if duration is None or leftovers:
        what = f" (did not understand: {' '.join(leftovers)})" if duration is not None and leftovers else ""
        raise DurationError(
            f"Cannot read a duration from '{text.strip()}'{what}. Examples: 3 hours, 45 days, 2 weeks, "
            "1 month 2 weeks, 2 недели, 1 месяц (a week is 7 days, a month 30 days)."
        )
    if not duration.is_positive:
        raise DurationError("The duration must be longer than zero.")
    return duration
