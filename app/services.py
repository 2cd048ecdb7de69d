"""The services container: every singleton built once at start-up and handed, typed, to the fronts.

The Telegram bot injects these into handlers as Dispatcher kwargs (``quotes: QuoteService``,
``answerer: Answerer | None``…); the console chat and the CLI use the same objects, so every front gives
the same answer to the same question. The answerer (embedder, index, model) is the expensive part: it is
built by :meth:`Services.ensure_answerer`, once, only by fronts that answer questions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.intents import IntentClassifier
from app.pipeline import ReplyPipeline
from app.router import BANK_FILE, BankError, SemanticRouter, load_bank
from gpu.data import GpuData
from gpu.fit.service import FitService
from gpu.placements.service import PlacementService
from gpu.quote.service import QuoteService
from infra.clock import ClockError, build_clock
from infra.datafile import DataFile
from infra.db import create_engine, dispose_engine
from infra.settings import Settings, SettingsError
from models import build_backend
from rag.answering.answerer import Answerer
from rag.answering.build import build_answerer
from rag.answering.conversation import build_conversation_store
from rag.glossary import Glossary, glossary_file
from rag.retrieval.dense import Embedder, EmbedderError, embedder_for
from rag.retrieval.reload import GlossaryReloader
from rag.retrieval.retriever import HybridRetriever, build_retriever
from rag.rules import RuleBook

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    engine: AsyncEngine  # the app database; lazy: nothing connects until a store is used
    data: GpuData  # the one owner of gpus.yaml, models.yaml and prices.yaml
    quotes: QuoteService
    placements: PlacementService  # simulated rentals made from quotes (no real GPUs)
    fit: FitService
    intents: IntentClassifier
    glossary: DataFile[Glossary]  # the one reader of entries.yaml (retriever and /terms)
    rules: RuleBook  # the one reader of rules.yaml: the company's rules and the seeds' disclaimers
    pipeline: ReplyPipeline  # the one reply pipeline every front renders (its semantic router joins later)
    retriever: HybridRetriever | None = None
    answerer: Answerer | None = None  # None until ensure_answerer(); its backend is None without a model
    reloader: GlossaryReloader | None = None  # follows entries.yaml and the index while a front runs
    # the console chat and the bot build the answerer in the background while already serving commands;
    # a question arriving meanwhile waits for the same build instead of starting a second one
    _answerer_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)
    _retriever_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)
    _router_failed: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def create(cls, settings: Settings, engine: AsyncEngine | None = None) -> Services:
        """Everything but the answerer: cheap (YAML catalogs, a lazy database engine)."""
        engine = engine or create_engine(settings.db.url)
        data = GpuData(settings.data.data_dir)
        data.check()
        fit = FitService(data)
        glossary = glossary_file(settings.data.data_dir)
        rules = RuleBook(settings.data.data_dir, glossary)
        rules.check()
        # one clock for quotes and placements: real time unless ANCHORGPU_CLOCK_OFFSET / _FILE say otherwise
        try:
            clock = build_clock(settings.data.clock_offset, settings.data.clock_file)
        except ClockError as exc:
            raise SettingsError(f"invalid settings: ANCHORGPU_CLOCK_FILE: {exc}") from None
        retention = settings.db.idempotency_retention_hours
        quotes = QuoteService(engine, data, retention_hours=retention, clock=clock)
        placements = PlacementService(engine, data, quotes, retention_hours=retention, clock=clock)
        intents = IntentClassifier(data, fit, rules)
        return cls(settings=settings, engine=engine, data=data, quotes=quotes, placements=placements, fit=fit,
                   intents=intents, glossary=glossary, rules=rules,
                   pipeline=ReplyPipeline(data, fit, quotes, intents, glossary))

    async def ensure_retriever(self) -> HybridRetriever:
        """The retriever (the glossary index: a fresh state folder ingests the glossary first), with the
        semantic router moved onto its embedder, so that one embedding per message serves both."""
        async with self._retriever_lock:
            if self.retriever is None:
                retriever = await asyncio.to_thread(build_retriever, self.settings, self.glossary.get())
                self.reloader = GlossaryReloader(self.settings.rag, self.glossary, retriever,
                                                 self.settings.rag.reload_interval_s, self.settings.data.data_dir)
                if retriever.embedder is not None:
                    await asyncio.to_thread(self._attach_router, retriever.embedder, retriever.query_vector)
                self.retriever = retriever
            return self.retriever

    async def ensure_router(self) -> None:
        """The semantic router, on the retriever's embedder when there is one, else on an embedder of its own:
        routing needs the embedder, not the index (a fit or price question from the CLI builds neither the
        index nor a language model)."""
        async with self._retriever_lock:
            if self.pipeline.router is not None or self.retriever is not None or self._router_failed:
                return
            try:
                embedder = await asyncio.to_thread(embedder_for, self.settings.rag)
            except EmbedderError as exc:  # messages are still routed by their slots and the rules
                log.error("semantic router off: %s", exc)
                self._router_failed = True
                return
            await asyncio.to_thread(self._attach_router, embedder, embedder.encode_query)

    async def ensure_answerer(self) -> Answerer:
        """Retriever, LLM (a bad model file degrades to retrieval-only answers), history, answerer."""
        await self.ensure_retriever()
        async with self._answerer_lock:
            if self.answerer is None:
                assert self.retriever is not None
                conversations = await build_conversation_store(self.settings, self.engine)
                self.answerer = await build_answerer(self.settings, self.retriever, conversations,
                                                     build_backend(self.settings.llm), self.rules.caveats_for,
                                                     known_names=catalog_names(self.data))
            return self.answerer

    def attach_router(self, retriever: HybridRetriever) -> None:
        """The semantic router on ``retriever``'s embedder (benchmarks that build their own retriever)."""
        if retriever.embedder is not None:
            self._attach_router(retriever.embedder, retriever.query_vector)

    def _attach_router(self, embedder: Embedder, encode: Callable[[str], Any]) -> None:
        try:
            bank = load_bank(self.settings.data.data_dir / BANK_FILE)
            router = SemanticRouter.build(bank, embedder.encode_queries, embedder.identity,
                                          self.settings.rag.router_cache_dir)
        except (BankError, OSError) as exc:  # messages are still routed by their slots and the rules
            log.error("semantic router off: %s", exc)
            self._router_failed = True
            return
        self.pipeline.attach_router(router, encode)

    async def follow_glossary(self) -> None:
        """Runs until cancelled: glossary edits and `anchorgpu ingest` runs reach this process's answers
        within RAG_RELOAD_INTERVAL_S (see :mod:`rag.retrieval.reload`). Returns at once when that is 0."""
        await self.ensure_answerer()
        if self.reloader is not None and self.reloader.interval_s > 0:
            await self.reloader.run_forever()

    async def aclose(self) -> None:
        if self.answerer is not None:
            await self.answerer.aclose()
        await dispose_engine(self.engine)


def catalog_names(data: GpuData) -> list[str]:
    """Every spelling of the catalogs' GPUs and models: names the answerer knows besides the glossary's."""
    gpus = [spelling for gpu in data.gpus.all() for spelling in (gpu.id, gpu.name, *gpu.aliases)]
    return gpus + [spelling for model in data.models.all() for spelling in (model.id, model.name, *model.aliases)]
