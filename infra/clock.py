"""The app's clock: real UTC time, or a controlled one for tests and demos (never on by default).

* ``ANCHORGPU_CLOCK_OFFSET`` shifts real time, e.g. ``3d``, ``-2h``, ``90m``, ``1w 2d`` or ``45s``: a demo
  can jump past a placement's paid period without waiting.
* ``ANCHORGPU_CLOCK_FILE`` names a file holding one ISO 8601 instant (``2026-12-01T12:00:00Z``): the
  clock stands still at that instant and follows the file as it is edited (read on every call, so two
  processes see the same time). The offset is added on top of it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path

Clock = Callable[[], dt.datetime]

_OFFSET_PART = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*(w|d|h|m|s)", re.IGNORECASE)
_UNIT_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}


class ClockError(ValueError):
    """A clock setting that cannot be read; the message says what was expected."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def parse_offset(text: str) -> dt.timedelta:
    """``"3d"``, ``"-2h"``, ``"1w 2d 3h"``, ``"-90m"`` -> a timedelta (a leading sign applies to all)."""
    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-").strip()
    parts = list(_OFFSET_PART.finditer(body))
    if not body or not parts or _OFFSET_PART.sub("", body).strip():
        raise ClockError(f"clock offset {text!r}: use a signed amount with w/d/h/m/s, e.g. 3d, -2h, 1w 2d")
    seconds = sum(float(part.group(1)) * _UNIT_SECONDS[part.group(2).lower()] for part in parts)
    return dt.timedelta(seconds=sign * seconds)


def parse_instant(text: str, where: str = "clock file") -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ClockError(f"{where}: expected an ISO 8601 time like 2026-12-01T12:00:00Z, got "
                         f"{text.strip()[:40]!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def build_clock(offset: str | None = None, fixed_file: Path | None = None) -> Clock:
    """The real clock unless a setting asks otherwise; bad settings fail here, at start-up."""
    shift = parse_offset(offset) if offset else dt.timedelta(0)
    if fixed_file is None:
        if not shift:
            return utc_now
        return lambda: utc_now() + shift

    def read_file() -> dt.datetime:
        try:
            text = fixed_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ClockError(f"clock file {fixed_file}: {exc.strerror or exc}") from None
        return parse_instant(text, f"clock file {fixed_file}") + shift

    read_file()  # a missing or broken file is a start-up error, not a surprise at the first placement
    return read_file
