"""The quote engine: a pure function of (request, GPU name, price list, issue time) -> :class:`Quote`.

Money is ``Decimal`` only. Each line is rounded ROUND_HALF_UP to the currency's minor units and the total
is the sum of the rounded lines, so the lines always add up to the total.

* on-demand / spot: one line, GPU-hours = count x billable hours (every started hour, at least one).
* committed: the cheapest combination of month (30 d) / week (7 d) / day terms, plus on-demand hours for a
  remainder, that covers the requested time. Terms are paid in full even if the placement stops early, so
  a committed quote may bill more hours than requested when a longer term is cheaper (e.g. 27 days ->
  one month). Choosing the minimum over covering plans makes the cost monotonic in duration and count and
  never above on-demand.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any

from gpu.prices import GPUPrice, PriceList, Term
from gpu.quote.duration import Duration, Unit
from gpu.quote.request import Pricing, QuoteInputError, QuoteRequest

RATE_QUANTUM = Decimal("0.0001")  # effective rates are informative, shown to 4 decimals

# Rule keys, rendered in each language by app.views.quote; printed where they apply.
RULE_EXAMPLE_PRICES = "example_prices"
RULE_WEEK_MONTH = "week_month"
RULE_STARTED_HOUR = "started_hour"
RULE_SPOT = "spot_interruptible"
RULE_TERM_PAID = "term_paid_in_full"
RULE_TERM_COVERS_MORE = "term_covers_more"
RULE_NO_TERM_CHEAPER = "no_term_cheaper"
RULE_ROUNDING = "rounding"


@dataclass(frozen=True)
class QuoteLine:
    kind: str             # "on-demand", "spot" or "term"
    term: str | None      # "day" / "week" / "month" for term lines
    periods: int          # terms bought (term lines) or hours (hourly lines), per GPU
    hours: int            # wall-clock hours the line covers
    description: str      # English, as printed by the CLI
    quantity: Decimal     # GPU-hours (hourly lines) or GPU-terms (term lines)
    unit: str             # "GPU-hour", "GPU-week", ...
    unit_price: Decimal
    amount: Decimal
    discount_percent: Decimal = Decimal(0)  # term lines: the discount off on-demand


@dataclass(frozen=True)
class QuoteOption:
    """One way to pay for the same request, shown side by side (on-demand vs the committed term)."""

    pricing: str
    billable_hours: int
    total: Decimal
    cheapest: bool




@dataclass(frozen=True)
class Quote:
    gpu_id: str
    gpu_name: str
    gpu_count: int
    pricing: str
    duration: Duration
    requested_hours: Decimal
    billable_hours: int
    currency: str
    minor_units: int
    unit_price: Decimal
    lines: tuple[QuoteLine, ...]
    total: Decimal
    effective_hourly_rate: Decimal    # per GPU-hour: total / (count x billable hours)
    cluster_hourly_rate: Decimal      # all GPUs together: total / billable hours
    price_list_version: str
    example_prices: bool
    issued_at: dt.datetime
    valid_until: dt.datetime
    rules: tuple[str, ...] = field(default=())
    options: tuple[QuoteOption, ...] = field(default=())  # empty unless compared (see pricing_options)


def _money(prices: PriceList, value: Decimal) -> Decimal:
    return prices.money(value)


def _rate(value: Decimal) -> Decimal:
    return value.quantize(RATE_QUANTUM, rounding=ROUND_HALF_UP)


def _minor(value: Decimal, minor_units: int) -> int:
    return int(value.scaleb(minor_units))


@lru_cache(maxsize=256)
def _cover_days(day: int, week: int, month: int, max_days: int) -> tuple[tuple[int, int, int, int], ...]:
    """Cheapest way to cover at least t days with terms, for t = 0..max_days (prices in minor units).

    Returns per t: (cost, months, weeks, days). Unbounded covering knapsack by dynamic programming,
    ties broken towards fewer covered days (less paid-but-unused time).
    """
    best: list[tuple[int, int, int, int, int]] = [(0, 0, 0, 0, 0)]  # cost, covered, months, weeks, days
    for t in range(1, max_days + 1):
        options = []
        for length, price, idx in ((1, day, 4), (7, week, 3), (30, month, 2)):
            prev = best[max(0, t - length)]
            counts = list(prev[2:])
            counts[idx - 2] += 1
            options.append((prev[0] + price, prev[1] + length, counts[0], counts[1], counts[2]))
        best.append(min(options))
    return tuple((cost, months, weeks, days) for cost, _, months, weeks, days in best)


def _hour_line_minor(rate: Decimal, minor_units: int) -> Callable[[int], int]:
    """GPU-hours -> the line amount in minor units, ROUND_HALF_UP, in integers (the search's hot loop).

    Same result as ``prices.money(gpu_hours * rate)``: rate = numerator / 10**scale, so the amount in
    minor units is gpu_hours * numerator / 10**(scale - minor_units), rounded half up.
    """
    sign, digits, exponent = rate.as_tuple()
    assert isinstance(exponent, int) and not sign
    numerator = int("".join(map(str, digits)) or "0")
    shift = -exponent - minor_units
    if shift <= 0:
        factor = numerator * 10 ** (-shift)
        return lambda gpu_hours: gpu_hours * factor
    denominator = 10 ** shift
    return lambda gpu_hours: (2 * gpu_hours * numerator + denominator) // (2 * denominator)


def _committed_plan(prices: PriceList, price: GPUPrice, count: int, hours: int) -> tuple[int, int, int, int]:
    """(months, weeks, days, on-demand hours) of the cheapest plan covering ``hours`` for ``count`` GPUs."""
    term_minor = {term: _minor(price.term_price[term], prices.minor_units) for term in Term}
    max_days = -(-hours // 24)
    table = _cover_days(term_minor[Term.DAY], term_minor[Term.WEEK], term_minor[Term.MONTH],
                        max(max_days, prices.max_duration_days))
    hour_line = _hour_line_minor(price.on_demand, prices.minor_units)
    best: tuple[tuple[int, int, int], tuple[int, int, int, int]] | None = None
    for covered_days in range(0, max_days + 1):
        cost, months, weeks, days = table[covered_days]
        term_hours = (30 * months + 7 * weeks + days) * 24
        remainder = max(0, hours - term_hours)
        total = count * cost + (hour_line(count * remainder) if remainder else 0)
        rank = (total, term_hours + remainder, -term_hours)
        if best is None or rank < best[0]:
            best = (rank, (months, weeks, days, remainder))
    assert best is not None
    return best[1]


def _check(request: QuoteRequest, prices: PriceList, gpu_name: str) -> GPUPrice:
    price = prices.price_for(request.gpu_id)
    if price is None:
        priced = sorted(prices.gpus)
        raise QuoteInputError(f"{gpu_name} is not in the price list ({prices.version}); rentable GPUs: "
                              f"{', '.join(priced)}.", priced, "gpu", "not_priced", gpu=gpu_name)
    if not 1 <= request.gpu_count <= prices.max_gpus_per_quote:
        raise QuoteInputError(f"The number of GPUs must be between 1 and {prices.max_gpus_per_quote} for an "
                              "automatic quote; for more, please contact sales.", [], "gpu_count",
                              "bad_count", max=prices.max_gpus_per_quote)
    if request.duration.hours <= 0:
        raise QuoteInputError("The duration must be longer than zero.", [], "duration", "zero_duration")
    if request.duration.hours > prices.max_duration_days * 24:
        raise QuoteInputError(f"Automatic quotes go up to {prices.max_duration_days} days; for longer, "
                              "please contact sales.", [], "duration", "too_long",
                              days=prices.max_duration_days)
    if request.pricing is Pricing.SPOT and price.spot is None:
        raise QuoteInputError(f"Spot (interruptible) capacity is not offered for {gpu_name}; try on-demand "
                              "or committed.", [Pricing.ON_DEMAND.value, Pricing.COMMITTED.value], "pricing",
                              "spot_unavailable", gpu=gpu_name)
    return price


_TERM_UNIT = {Term.DAY: "GPU-day", Term.WEEK: "GPU-week", Term.MONTH: "GPU-month"}


def compute_quote(request: QuoteRequest, gpu_name: str, prices: PriceList, issued_at: dt.datetime,
                  compare: bool = True) -> Quote:
    """Price ``request``; raises :class:`QuoteInputError` when it cannot be quoted automatically. ``compare``:
    also price the other ways to pay for the same hours (:func:`pricing_options`)."""
    price = _check(request, prices, gpu_name)
    count = request.gpu_count
    requested = request.duration.hours
    billable = request.duration.billable_hours
    who = f"{gpu_name} × {count}"
    lines: list[QuoteLine] = []
    rules: list[str] = []
    if request.pricing is Pricing.COMMITTED:
        months, weeks, days, remainder = _committed_plan(prices, price, count, billable)
        for term, periods in ((Term.MONTH, months), (Term.WEEK, weeks), (Term.DAY, days)):
            if periods:
                unit_price = price.term_price[term]
                lines.append(QuoteLine(
                    kind="term", term=term.value, periods=periods, hours=periods * term.hours,
                    description=(f"{who}, {periods} × {term.value} term ({term.hours} h, "
                                 f"-{price.term_discount_percent[term].normalize():f}%), paid in full"),
                    quantity=Decimal(count * periods), unit=_TERM_UNIT[term], unit_price=unit_price,
                    amount=_money(prices, count * periods * unit_price),
                    discount_percent=price.term_discount_percent[term]))
        if remainder:
            lines.append(QuoteLine(
                kind="on-demand", term=None, periods=remainder, hours=remainder,
                description=f"{who}, on-demand, {remainder} h (shorter than a cheaper term)",
                quantity=Decimal(count * remainder), unit="GPU-hour", unit_price=price.on_demand,
                amount=_money(prices, count * remainder * price.on_demand)))
        billable = sum(line.hours for line in lines)
        if any(line.kind == "term" for line in lines):
            rules.append(RULE_TERM_PAID)
        else:
            rules.append(RULE_NO_TERM_CHEAPER)
        if billable > request.duration.billable_hours:
            rules.append(RULE_TERM_COVERS_MORE)
        if any(line.term in {"week", "month"} for line in lines):
            rules.append(RULE_WEEK_MONTH)
    else:
        spot = request.pricing is Pricing.SPOT
        rate = price.spot if spot and price.spot is not None else price.on_demand
        label = "spot (interruptible)" if spot else "on-demand"
        lines.append(QuoteLine(
            kind=request.pricing.value, term=None, periods=billable, hours=billable,
            description=f"{who}, {label}, {billable} h", quantity=Decimal(count * billable), unit="GPU-hour",
            unit_price=rate, amount=_money(prices, count * billable * rate)))
        if spot:
            rules.append(RULE_SPOT)
    if RULE_WEEK_MONTH not in rules and any(unit in {Unit.WEEK, Unit.MONTH}
                                           for _, unit in request.duration.parts):
        rules.append(RULE_WEEK_MONTH)
    if Decimal(request.duration.billable_hours) != requested and any(
            line.kind != "term" for line in lines):
        rules.append(RULE_STARTED_HOUR)
    if prices.example:
        rules.append(RULE_EXAMPLE_PRICES)
    rules.append(RULE_ROUNDING)

    total = sum((line.amount for line in lines), Decimal(0)).quantize(prices.quantum)
    effective = _rate(total / (count * billable))
    options = pricing_options(request, gpu_name, prices, issued_at, total, billable) if compare else ()
    unit_price = lines[0].unit_price if request.pricing is not Pricing.COMMITTED else effective
    return Quote(
        gpu_id=request.gpu_id, gpu_name=gpu_name, gpu_count=count, pricing=request.pricing.value,
        duration=request.duration, requested_hours=requested, billable_hours=billable,
        currency=prices.currency, minor_units=prices.minor_units, unit_price=unit_price, lines=tuple(lines),
        total=total, effective_hourly_rate=effective, cluster_hourly_rate=_rate(total / billable),
        price_list_version=prices.version, example_prices=prices.example, issued_at=issued_at,
        valid_until=issued_at + dt.timedelta(days=prices.quote_valid_days), rules=tuple(rules),
        options=options)


def pricing_options(request: QuoteRequest, gpu_name: str, prices: PriceList, issued_at: dt.datetime,
                    total: Decimal, billable: int) -> tuple[QuoteOption, ...]:
    """The request's own way to pay first, then each other way the price list offers for the same hours that
    costs less (on-demand, committed day/week/month terms and their mix, spot where it is offered), cheapest
    first, the cheapest uninterruptible one marked — or nothing when the request's own way already costs
    least (2 × H100 for three days on demand is 430.56; as three committed days, 409.02)."""
    others: list[QuoteOption] = []
    for pricing in Pricing:
        if pricing is request.pricing:
            continue
        try:
            other = compute_quote(replace(request, pricing=pricing), gpu_name, prices, issued_at, compare=False)
        except QuoteInputError:
            continue  # spot not offered for this GPU
        others.append(QuoteOption(pricing.value, other.billable_hours, other.total, False))
    if min((option.total for option in others), default=total) >= total:
        return ()
    own = QuoteOption(request.pricing.value, billable, total, False)
    # spot may be taken back at any moment: it is listed with what it saves, the cheapest mark goes to the
    # cheapest way that runs to the end
    steady = min(option.total for option in (own, *others) if option.pricing != Pricing.SPOT.value)
    cheaper = sorted((option for option in others if option.total < total), key=lambda option: option.total)
    return tuple(replace(option, cheapest=option.pricing != Pricing.SPOT.value and option.total == steady)
                 for option in (own, *cheaper))


# ---- serialisation: the stored payload and the CLI contract -------------------------------------------

def _s(value: Decimal) -> str:
    return format(value, "f")


def quote_to_payload(quote: Quote) -> dict[str, Any]:
    """A JSON-safe dict (decimals as strings) from which :func:`quote_from_payload` rebuilds the quote."""
    return {
        "gpu": quote.gpu_id, "gpu_name": quote.gpu_name, "gpu_count": quote.gpu_count,
        "pricing": quote.pricing,
        "duration": [[_s(amount), unit.value] for amount, unit in quote.duration.parts],
        "requested_hours": _s(quote.requested_hours.normalize()), "billable_hours": str(quote.billable_hours),
        "currency": quote.currency, "minor_units": quote.minor_units, "unit_price": _s(quote.unit_price),
        "lines": [{"kind": line.kind, "term": line.term, "periods": line.periods, "hours": line.hours,
                   "description": line.description, "quantity": _s(line.quantity), "unit": line.unit,
                   "unit_price": _s(line.unit_price), "amount": _s(line.amount),
                   "discount_percent": _s(line.discount_percent)} for line in quote.lines],
        "total": _s(quote.total), "effective_hourly_rate": _s(quote.effective_hourly_rate),
        "cluster_hourly_rate": _s(quote.cluster_hourly_rate),
        "price_list_version": quote.price_list_version, "example_prices": quote.example_prices,
        "issued_at": quote.issued_at.isoformat(), "valid_until": quote.valid_until.isoformat(),
        "rules": list(quote.rules),
        "options": _options_payload(quote),
    }


def _options_payload(quote: Quote) -> list[dict[str, Any]]:
    return [{"pricing": option.pricing, "billable_hours": str(option.billable_hours), "total": _s(option.total),
             "cheapest": option.cheapest} for option in quote.options]


def quote_from_payload(payload: dict[str, Any]) -> Quote:
    return Quote(
        gpu_id=payload["gpu"], gpu_name=payload["gpu_name"], gpu_count=int(payload["gpu_count"]),
        pricing=payload["pricing"],
        duration=Duration(tuple((Decimal(amount), Unit(unit)) for amount, unit in payload["duration"])),
        requested_hours=Decimal(payload["requested_hours"]), billable_hours=int(payload["billable_hours"]),
        currency=payload["currency"], minor_units=int(payload["minor_units"]),
        unit_price=Decimal(payload["unit_price"]),
        lines=tuple(QuoteLine(kind=row["kind"], term=row["term"], periods=int(row["periods"]),
                              hours=int(row["hours"]), description=row["description"],
                              quantity=Decimal(row["quantity"]), unit=row["unit"],
                              unit_price=Decimal(row["unit_price"]), amount=Decimal(row["amount"]),
                              discount_percent=Decimal(row.get("discount_percent", "0")))
                    for row in payload["lines"]),
        total=Decimal(payload["total"]), effective_hourly_rate=Decimal(payload["effective_hourly_rate"]),
        cluster_hourly_rate=Decimal(payload["cluster_hourly_rate"]),
        price_list_version=payload["price_list_version"], example_prices=bool(payload["example_prices"]),
        issued_at=dt.datetime.fromisoformat(payload["issued_at"]),
        valid_until=dt.datetime.fromisoformat(payload["valid_until"]), rules=tuple(payload["rules"]),
        options=tuple(QuoteOption(row["pricing"], int(row["billable_hours"]), Decimal(row["total"]),
                                  bool(row["cheapest"])) for row in payload.get("options", [])),
    )


def cli_contract(quote: Quote, quote_id: str, replayed: bool) -> dict[str, Any]:
    """The `anchorgpu quote --json` object: the contract keys first, then informative extras."""
    return {
        "quote_id": quote_id,
        "gpu": quote.gpu_id,
        "gpu_count": quote.gpu_count,
        "pricing": quote.pricing,
        "billable_hours": str(quote.billable_hours),
        "currency": quote.currency,
        "unit_price": _s(quote.unit_price),
        "lines": [{"description": line.description, "quantity": _s(line.quantity),
                   "unit_price": _s(line.unit_price), "amount": _s(line.amount)} for line in quote.lines],
        "total": _s(quote.total),
        "replayed": replayed,
        "price_list_version": quote.price_list_version,
        # extras (not part of the parsed contract)
        "gpu_name": quote.gpu_name,
        "duration": quote.duration.describe("en"),
        "requested_hours": _s(quote.requested_hours.normalize()),
        "effective_hourly_rate": _s(quote.effective_hourly_rate),
        "valid_until": quote.valid_until.isoformat(),
        "rules": list(quote.rules),
        # added after the contract: the cheaper ways to pay for the same hours (pricing_options)
        "options": _options_payload(quote),
    }
