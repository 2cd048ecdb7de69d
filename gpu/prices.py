"""The operator-editable price list (`data/prices.yaml`): exact Decimal prices per GPU catalog id.

Term lengths are not configurable: the company rule fixes a day at 24 h, a week at 7 days and a month at
30 days. A term's price per GPU is derived once here (hours x on-demand x (1 - discount), rounded
ROUND_HALF_UP to minor units) so that every term line of a quote is an exact multiple of a published price.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import Enum
from pathlib import Path
from typing import Any

import yaml


class Term(Enum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"

    @property
    def hours(self) -> int:
        return TERM_HOURS[self]


# Company rule: week = exactly 7 days, month = exactly 30 days.
TERM_HOURS: dict[Term, int] = {Term.DAY: 24, Term.WEEK: 7 * 24, Term.MONTH: 30 * 24}


class PriceListError(ValueError):
    """The price file is missing or invalid; the message names the file and the field."""


@dataclass(frozen=True)
class GPUPrice:
    gpu_id: str
    on_demand: Decimal              # per GPU-hour
    spot: Decimal | None            # per GPU-hour; None = not offered
    term_discount_percent: dict[Term, Decimal]
    term_price: dict[Term, Decimal]  # per GPU per term, rounded to minor units


@dataclass(frozen=True)
class PriceList:
    version: str
    currency: str
    minor_units: int
    effective_date: dt.date
    example: bool
    quote_valid_days: int
    max_gpus_per_quote: int
    max_duration_days: int
    gpus: dict[str, GPUPrice]
    source: str = ""

    @property
    def quantum(self) -> Decimal:
        return Decimal(1).scaleb(-self.minor_units)

    def money(self, value: Decimal) -> Decimal:
        """ROUND_HALF_UP to the currency's minor units: the one rounding rule of every quote line."""
        return value.quantize(self.quantum, rounding=ROUND_HALF_UP)

    def price_for(self, gpu_id: str) -> GPUPrice | None:
        return self.gpus.get(gpu_id)


def _decimal(value: Any, where: str, *, allow_none: bool = False) -> Decimal | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or value is None:
        raise PriceListError(f"{where}: expected a decimal number, got {value!r}")
    try:
        # str() first: a YAML float 2.99 becomes "2.99", not the binary 2.9900000000000002131...
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise PriceListError(f"{where}: expected a decimal number, got {value!r}") from None
    if not number.is_finite():
        raise PriceListError(f"{where}: expected a finite number, got {value!r}")
    return number


def _discounts(raw: Any, where: str, base: dict[Term, Decimal] | None = None) -> dict[Term, Decimal]:
    result = dict(base or {})
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise PriceListError(f"{where}: expected a mapping of day/week/month to a percent")
    for name, value in raw.items():
        try:
            term = Term(str(name))
        except ValueError:
            raise PriceListError(f"{where}: unknown term '{name}' (use day, week, month)") from None
        percent = _decimal(value, f"{where}.{name}")
        assert percent is not None
        if not Decimal(0) <= percent < Decimal(100):
            raise PriceListError(f"{where}.{name}: a discount must be at least 0 and below 100 percent")
        result[term] = percent
    return result


def parse_price_list(document: Any, source: str = "prices.yaml") -> PriceList:
    if not isinstance(document, dict):
        raise PriceListError(f"{source}: expected a mapping at the top level")
    try:
        version = str(document["version"]).strip()
        currency = str(document["currency"]).strip().upper()
        gpus_raw = document["gpus"]
    except KeyError as exc:
        raise PriceListError(f"{source}: missing field {exc.args[0]!r}") from None
    if not version:
        raise PriceListError(f"{source}: version must not be empty")
    if len(currency) != 3 or not currency.isalpha():
        raise PriceListError(f"{source}: currency must be an ISO 4217 code like USD")
    minor_units = int(document.get("minor_units", 2))
    if not 0 <= minor_units <= 4:
        raise PriceListError(f"{source}: minor_units must be between 0 and 4")
    effective = document.get("effective_date")
    if isinstance(effective, str):
        effective = dt.date.fromisoformat(effective)
    if not isinstance(effective, dt.date):
        raise PriceListError(f"{source}: effective_date must be a date like 2026-11-01")
    defaults = _discounts(document.get("term_discount_percent"), f"{source}: term_discount_percent",
                          {term: Decimal(0) for term in Term})
    if not isinstance(gpus_raw, dict) or not gpus_raw:
        raise PriceListError(f"{source}: gpus must map catalog ids to prices")
    quantum = Decimal(1).scaleb(-minor_units)
    gpus: dict[str, GPUPrice] = {}
    for gpu_id, row in gpus_raw.items():
        where = f"{source}: gpus.{gpu_id}"
        if not isinstance(row, dict) or "on_demand" not in row:
            raise PriceListError(f"{where}: needs at least on_demand")
        on_demand = _decimal(row["on_demand"], f"{where}.on_demand")
        spot = _decimal(row.get("spot"), f"{where}.spot", allow_none=True)
        assert on_demand is not None
        if on_demand <= 0:
            raise PriceListError(f"{where}.on_demand: must be positive")
        if spot is not None and not Decimal(0) < spot <= on_demand:
            raise PriceListError(f"{where}.spot: must be positive and not above on_demand")
        discounts = _discounts(row.get("term_discount_percent"), f"{where}.term_discount_percent", defaults)
        term_price = {
            term: (term.hours * on_demand * (1 - discounts[term] / 100)).quantize(quantum, ROUND_HALF_UP)
            for term in Term
        }
        gpus[str(gpu_id)] = GPUPrice(str(gpu_id), on_demand, spot, discounts, term_price)
    return PriceList(
        version=version,
        currency=currency,
        minor_units=minor_units,
        effective_date=effective,
        example=bool(document.get("example", False)),
        quote_valid_days=int(document.get("quote_valid_days", 7)),
        max_gpus_per_quote=int(document.get("max_gpus_per_quote", 64)),
        max_duration_days=int(document.get("max_duration_days", 365)),
        gpus=gpus,
        source=source,
    )


def load_price_list(data_dir: Path, known_gpu_ids: set[str] | None = None) -> PriceList:
    """``data_dir/prices.yaml`` (tools and tests; the app reads it through :class:`PriceBook`)."""
    return read_price_list(data_dir / "prices.yaml", known_gpu_ids)


def read_price_list(path: Path, known_gpu_ids: set[str] | None = None) -> PriceList:
    """Parse a price file; with ``known_gpu_ids``, every priced id must be in the GPU catalog."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PriceListError(f"price list not found: {path}") from None
    except yaml.YAMLError as exc:
        raise PriceListError(f"{path}: not valid YAML ({exc})") from None
    prices = parse_price_list(document, str(path))
    if known_gpu_ids is not None:
        unknown = sorted(set(prices.gpus) - known_gpu_ids)
        if unknown:
            raise PriceListError(f"{path}: ids not in the GPU catalog: {', '.join(unknown)}")
    return prices
