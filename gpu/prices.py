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
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from infra.yamlfile import YamlDocument, as_text, read_yaml, validate


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
    """The price file is missing or invalid; the message names the file, the line and the field."""


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


def _decimal(value: Any) -> Any:
    if isinstance(value, Decimal) or value is None:
        return value
    if isinstance(value, bool):
        raise ValueError(f"expected a decimal number, got {value!r}")
    try:
        # str() first: a YAML float 2.99 becomes "2.99", not the binary 2.9900000000000002131...
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"expected a decimal number, got {value!r}") from None
    if not number.is_finite():
        raise ValueError(f"expected a finite number, got {value!r}")
    return number


def _percent(value: Decimal) -> Decimal:
    if not Decimal(0) <= value < Decimal(100):
        raise ValueError("a discount must be at least 0 and below 100 percent")
    return value


def _positive(value: Decimal) -> Decimal:
    if value <= 0:
        raise ValueError("must be positive")
    return value


def _text(value: Any) -> Any:
    value = as_text(value)  # a scalar as written; a list or a mapping is left for the model to refuse
    return value.strip() if isinstance(value, str) else value


Number = Annotated[Decimal, BeforeValidator(_decimal)]
Percent = Annotated[Decimal, BeforeValidator(_decimal), AfterValidator(_percent)]
Discounts = dict[Term, Percent]


class _GpuRow(BaseModel):
    """One GPU of ``gpus:``."""

    model_config = ConfigDict(extra="forbid")

    on_demand: Annotated[Decimal, BeforeValidator(_decimal), AfterValidator(_positive)]
    spot: Number | None = None
    term_discount_percent: Discounts | None = None

    @field_validator("spot")
    @classmethod
    def _spot_below_on_demand(cls, spot: Decimal | None, info: ValidationInfo) -> Decimal | None:
        on_demand = info.data.get("on_demand")
        if spot is not None and on_demand is not None and not Decimal(0) < spot <= on_demand:
            raise ValueError("must be positive and not above on_demand")
        return spot


class _PriceFile(BaseModel):
    """``data/prices.yaml`` (its fields are described in the file's header)."""

    model_config = ConfigDict(extra="forbid")

    example: bool = False
    version: Annotated[str, BeforeValidator(_text), Field(min_length=1)]
    currency: Annotated[str, BeforeValidator(_text)]
    minor_units: Annotated[int, Field(ge=0, le=4)] = 2
    effective_date: dt.date
    quote_valid_days: int = 7
    max_gpus_per_quote: int = 64
    max_duration_days: int = 365
    term_discount_percent: Discounts | None = None
    gpus: Annotated[dict[Annotated[str, BeforeValidator(_text)], _GpuRow], Field(min_length=1)]

    @field_validator("currency")
    @classmethod
    def _iso_code(cls, currency: str) -> str:
        currency = currency.upper()
        if len(currency) != 3 or not currency.isalpha():
            raise ValueError("must be an ISO 4217 code like USD")
        return currency

    @field_validator("effective_date", mode="before")
    @classmethod
    def _a_date(cls, value: Any) -> Any:
        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                pass
        if not isinstance(value, dt.date):
            raise ValueError("must be a date like 2026-11-01")
        return value


def parse_price_list(document: Any, source: str = "prices.yaml") -> PriceList:
    """A price list from a parsed document (a :class:`YamlDocument` gives the errors their line numbers)."""
    located = document if isinstance(document, YamlDocument) else YamlDocument(source, document)
    if not isinstance(located.data, dict):
        raise PriceListError(f"{located.source}: expected a mapping at the top level")
    raw = validate(_PriceFile, located, PriceListError)
    defaults = {term: Decimal(0) for term in Term} | (raw.term_discount_percent or {})
    quantum = Decimal(1).scaleb(-raw.minor_units)
    gpus: dict[str, GPUPrice] = {}
    for gpu_id, row in raw.gpus.items():
        discounts = defaults | (row.term_discount_percent or {})
        term_price = {
            term: (term.hours * row.on_demand * (1 - discounts[term] / 100)).quantize(quantum, ROUND_HALF_UP)
            for term in Term
        }
        gpus[gpu_id] = GPUPrice(gpu_id, row.on_demand, row.spot, discounts, term_price)
    return PriceList(
        version=raw.version,
        currency=raw.currency,
        minor_units=raw.minor_units,
        effective_date=raw.effective_date,
        example=raw.example,
        quote_valid_days=raw.quote_valid_days,
        max_gpus_per_quote=raw.max_gpus_per_quote,
        max_duration_days=raw.max_duration_days,
        gpus=gpus,
        source=located.source,
    )


def load_price_list(data_dir: Path, known_gpu_ids: set[str] | None = None) -> PriceList:
    """``data_dir/prices.yaml`` (tools and tests; the app reads it through :class:`PriceBook`)."""
    return read_price_list(data_dir / "prices.yaml", known_gpu_ids)


def read_price_list(path: Path, known_gpu_ids: set[str] | None = None) -> PriceList:
    """Parse a price file; with ``known_gpu_ids``, every priced id must be in the GPU catalog."""
    try:
        document = read_yaml(path, PriceListError)
    except FileNotFoundError:
        raise PriceListError(f"price list not found: {path}") from None
    prices = parse_price_list(document)
    if known_gpu_ids is not None:
        unknown = sorted(set(prices.gpus) - known_gpu_ids)
        if unknown:
            raise PriceListError(f"{document.where(('gpus', unknown[0]))}: ids not in the GPU catalog: "
                                 f"{', '.join(unknown)}")
    return prices
