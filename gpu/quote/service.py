"""QuoteService: the one entry point the bot, the console chat and the CLI use for quotes."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from gpu.catalog import GPUCatalog
from gpu.data import GpuData
from gpu.prices import PriceList
from gpu.quote.engine import Quote, compute_quote
from gpu.quote.request import ParsedText, QuoteInputError, QuoteRequest, parse_quote_text
from gpu.quote.store import IssuedQuote, QuoteStore
from infra.migrate import migrate

Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class QuoteService:
    def __init__(self, engine: AsyncEngine, data: GpuData, *, retention_hours: int = 24,
                 clock: Clock = utc_now) -> None:
        self.data = data
        self.store = QuoteStore(engine, retention_hours)
        self.clock = clock
        self._started = False
        self._start_lock = asyncio.Lock()  # only guards the one-time start, not idempotency

    async def start(self) -> None:
        """Migrate the database (a no-op at head), validate the price list, forget expired idempotency keys.

        Runs once, on first use, so commands that never quote never touch the database.
        """
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            await migrate(self.store.engine)
            self.prices()
            await self.store.purge_expired_keys(self.clock())
            self._started = True

    @property
    def catalog(self) -> GPUCatalog:
        return self.data.gpus

    def prices(self) -> PriceList:
        """The current price list (its owner, :class:`gpu.data.PriceBook`, re-reads it on change)."""
        return self.data.prices.current()

    # ---- pure parts ----------------------------------------------------------------------------------
    def parse(self, text: str) -> ParsedText:
        return parse_quote_text(text, self.catalog, rentable=self.rentable_gpu_ids())

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
        return self.data.prices.rentable_ids()

    def offers_spot(self, gpu_id: str) -> bool:
        return self.data.prices.offers_spot(gpu_id)
