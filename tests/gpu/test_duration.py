"""Durations in Russian and English; the company rule week = 7 days, month = 30 days."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu.quote.duration import Duration, DurationError, Unit, format_amount, parse_duration


@pytest.mark.parametrize(("text", "hours"), [
    ("3 hours", 3), ("3h", 3), ("1 hour", 1), ("90 minutes", Decimal("1.5")),
    ("45 days", 45 * 24), ("45d", 45 * 24), ("a week", 168), ("2 weeks", 336), ("2w", 336),
    ("1 month", 720), ("1 mo", 720), ("1 month 2 weeks", 720 + 336), ("1 month and 2 weeks", 1056),
    ("1 month, 2 weeks", 1056), ("1.5 days", 36),
    ("2 недели", 336), ("две недели", 336), ("неделя", 168), ("1 неделю", 168), ("5 недель", 840),
    ("3 часа", 3), ("3ч", 3), ("10 дней", 240), ("1,5 дня", 36), ("сутки", 24), ("двое суток", 48),
    ("1 месяц", 720), ("2 месяца", 1440), ("1 месяц и 2 недели", 1056), ("полтора месяца", 1080),
    ("на 3 дня", 72), ("2 часов", 2), ("48 часам", 48), ("пару часиков", 2),
])
def test_parses_russian_and_english(text: str, hours: int | Decimal) -> None:
    assert parse_duration(text).hours == Decimal(hours)


@pytest.mark.parametrize("text", ["", "soon", "3", "3 m", "h100 x8", "2 weeks and a banana", "0 days",
                                  # words that start like «час» and are not the hour
                                  "часть", "часто", "частота", "частично"])
def test_rejects_what_is_not_a_duration_with_examples(text: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration(text)
    message = str(info.value)
    assert "2 weeks" in message or "zero" in message


def test_week_and_month_are_exactly_7_and_30_days() -> None:
    day = parse_duration("1 day").billable_hours
    assert parse_duration("1 week").billable_hours == 7 * day
    assert parse_duration("1 month").billable_hours == 30 * day
    assert parse_duration("1 неделя").billable_hours == 7 * day
    assert parse_duration("1 месяц").billable_hours == 30 * day


def test_every_started_hour_is_billed_at_least_one() -> None:
    assert parse_duration("20 minutes").billable_hours == 1
    assert parse_duration("60 minutes").billable_hours == 1  # exactly one hour, not 1.000…1
    assert parse_duration("61 minutes").billable_hours == 2


@pytest.mark.parametrize(("amount", "unit", "lang", "expected"), [
    (1, Unit.WEEK, "ru", "1 неделя"), (2, Unit.WEEK, "ru", "2 недели"), (5, Unit.WEEK, "ru", "5 недель"),
    (11, Unit.DAY, "ru", "11 дней"), (21, Unit.DAY, "ru", "21 день"), (1, Unit.MONTH, "en", "1 month"),
    (2, Unit.HOUR, "en", "2 hours"),
])
def test_describes_in_both_languages(amount: int, unit: Unit, lang: str, expected: str) -> None:
    assert format_amount(Decimal(amount), unit, lang) == expected


@given(months=st.integers(0, 12), weeks=st.integers(0, 8), days=st.integers(0, 40), hours=st.integers(0, 48))
def test_parts_add_up_in_any_language(months: int, weeks: int, days: int, hours: int) -> None:
    parts = [(months, Unit.MONTH), (weeks, Unit.WEEK), (days, Unit.DAY), (hours, Unit.HOUR)]
    chosen = [(Decimal(n), unit) for n, unit in parts if n]
    expected = months * 720 + weeks * 168 + days * 24 + hours
    if not chosen:
        return
    for lang in ("en", "ru"):
        text = " ".join(format_amount(n, unit, lang) for n, unit in chosen)
        assert parse_duration(text).hours == expected, text
    assert Duration.of_hours(expected).hours == expected
