"""QuoteService: the one entry point the bot, the console chat and the CLI use for quotes."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.catalog import GPUCatalog, load_gpu_catalog
from gpu.quote.engine import Quote, compute_quote
from gpu.quote.prices import DEFAULT_DATA_DIR, PriceList, Term, load_price_list
from gpu.quote.request import ParsedText, Pricing, QuoteInputError, QuoteRequest, parse_quote_text
from gpu.quote.store import IssuedQuote, QuoteStore

Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class QuoteService:
    def __init__(self, engine: AsyncEngine, *, data_dir: Path | None = None, retention_hours: int = 24,
                 catalog: GPUCatalog | None = None, clock: Clock = utc_now) -> None:
        self.data_dir = data_dir or DEFAULT_DATA_DIR
        self._prices_path = self.data_dir / "prices.yaml"
        self.catalog = catalog or load_gpu_catalog(self.data_dir)
        self.store = QuoteStore(engine, retention_hours)
        self.clock = clock
        self._prices: PriceList | None = None
        self._prices_mtime: float = -1.0
        self._started = False
        self._start_lock = asyncio.Lock()  # only guards one-time schema creation, not idempotency

    async def start(self) -> None:
        """Create the tables (idempotent), validate the price list, forget expired idempotency keys.

        Runs once, on first use, so commands that never quote never touch the database.
        """
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            await self.store.create_schema()
            self.prices()
            await self.store.purge_expired_keys(self.clock())
            self._started = True

    def prices(self) -> PriceList:
        """The price list, re-read when the operator has changed the file (one stat() per call)."""
        try:
            mtime = self._prices_path.stat().st_mtime
        except FileNotFoundError:
            mtime = -1.0
        if self._prices is None or mtime != self._prices_mtime:
            self._prices = load_price_list(self.data_dir, set(self.catalog.ids()))
            self._prices_mtime = mtime
        return self._prices

    # ---- pure parts ----------------------------------------------------------------------------------
    def parse(self, text: str) -> ParsedText:
        return parse_quote_text(text, self.catalog)

    def preview(self, request: QuoteRequest) -> Quote:
        """Price without storing (the guided flow's confirm step)."""
        return compute_quote(request, self.catalog.get(request.gpu_id).name, self.prices(), self.clock())

    # ---- issuing -------------------------------------------------------------------------------------
    async def quote_text(self, text: str, *, owner: str, key: str | None = None) -> IssuedQuote:
        """Parse ``text`` (it may carry ``key=…``) and issue; an explicit ``key`` must agree with it."""
        parsed = self.parse(text)
        if parsed.key is not None and key is not None and parsed.key != key:
            raise QuoteInputError("Two different idempotency keys were given; pass only one.", [], "key",
                                  "two_keys")
        return await self.issue(parsed.request, owner=owner, key=parsed.key or key, request_text=text.strip())

    async def issue(self, request: QuoteRequest, *, owner: str, key: str | None,
                    request_text: str) -> IssuedQuote:
        await self.start()
        now = self.clock()
        gpu_name = self.catalog.get(request.gpu_id).name
        return await self.store.issue(
            owner=owner, key=key, request=request, request_text=request_text,
            make_quote=lambda: compute_quote(request, gpu_name, self.prices(), now), now=now)

    async def recent(self, owner: str, limit: int = 10) -> list[IssuedQuote]:
        await self.start()
        return await self.store.recent(owner, limit)

    async def get(self, quote_id: str) -> IssuedQuote | None:
        await self.start()
        return await self.store.get(quote_id)

    # ---- catalog with prices -------------------------------------------------------------------------
    def rentable_gpu_ids(self) -> list[str]:
        prices = self.prices()
        return [gpu_id for gpu_id in self.catalog.ids() if gpu_id in prices.gpus]

    def offers_spot(self, gpu_id: str) -> bool:
        price = self.prices().price_for(gpu_id)
        return price is not None and price.spot is not None

    def gpus_with_prices(self) -> dict[str, Any]:
        return gpus_with_prices(self.catalog, self.prices())


def gpus_with_prices(catalog: GPUCatalog, prices: PriceList) -> dict[str, Any]:
    """The `anchorgpu gpus --json` document: every catalog GPU with its prices (null = not rented)."""
    rows = []
    for spec in catalog.all():
        price = prices.price_for(spec.id)
        row: dict[str, Any] = {
            "id": spec.id, "name": spec.name, "vendor": spec.vendor, "memory_gb": spec.memory_gb,
            "available": price is not None, "on_demand_hourly": None, "spot_hourly": None, "terms": None,
        }
        if price is not None:
            row["on_demand_hourly"] = format(price.on_demand, "f")
            row["spot_hourly"] = None if price.spot is None else format(price.spot, "f")
            row["terms"] = {term.value: {"hours": term.hours,
                                         "discount_percent": format(price.term_discount_percent[term], "f"),
                                         "price_per_gpu": format(price.term_price[term], "f")}
                            for term in Term}
        rows.append(row)
    return {"price_list_version": prices.version, "currency": prices.currency,
            "effective_date": prices.effective_date.isoformat(), "example_prices": prices.example,
            "pricing_types": [p.value for p in Pricing], "gpus": rows}
