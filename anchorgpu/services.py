"""The heavy singletons, built once at start-up and shared by the bot, the console chat and the CLI."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

from anchorgpu.db import create_engine, dispose_engine
from anchorgpu.settings import Settings

if TYPE_CHECKING:
    from gpu.fit.service import FitService
    from gpu.quote.service import QuoteService
    from models.base import LLMBackend
    from rag.answer import Answerer
    from rag.retriever import HybridRetriever


@dataclass
class Services:
    settings: Settings
    # the app database (SQLite file or PostgreSQL); lazy: nothing connects until a store is used
    engine: AsyncEngine | None = None
    quotes: QuoteService | None = None
    fit: FitService | None = None  # the VRAM fit engine: pure and cheap to build (YAML catalogs)
    # glossary answers: built by ensure_answerer() (the bot calls it at start-up; CLI commands that do
    # not answer questions never load the model)
    retriever: HybridRetriever | None = None
    llm: LLMBackend | None = None  # None when the model could not load (answers are retrieval-only)
    answerer: Answerer | None = None
    # the console chat and the bot start building the answerer in the background while already serving
    # commands; a question arriving meanwhile waits on the same build instead of starting a second one
    _answerer_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)

    @classmethod
    async def create(cls, settings: Settings) -> Services:
        from gpu.quote.service import QuoteService

        engine = create_engine(settings.db.url)
        quotes = QuoteService(engine, data_dir=settings.data.data_dir,
                              retention_hours=settings.db.idempotency_retention_hours)
        from gpu.fit.service import FitService

        fit = FitService.from_data_dir(settings.data.data_dir)
        return cls(settings=settings, engine=engine, quotes=quotes, fit=fit)

    async def ensure_answerer(self) -> Answerer:
        """Retriever, LLM (loaded; a bad model file degrades to retrieval-only), history store, answerer."""
        async with self._answerer_lock:
            if self.answerer is None:
                await self._build_answerer()
            assert self.answerer is not None
            return self.answerer

    async def _build_answerer(self) -> None:
        from rag.answer import build_answerer
        from rag.conversation import build_conversation_store
        from rag.retriever import build_retriever

        if self.retriever is None:
            self.retriever = await asyncio.to_thread(build_retriever, self.settings)
        if self.engine is None:
            self.engine = create_engine(self.settings.db.url)
        conversations = await build_conversation_store(self.settings, self.engine)
        self.answerer = await build_answerer(self.settings, self.retriever, conversations)
        self.llm = self.answerer.backend

    async def aclose(self) -> None:
        if self.answerer is not None:
            await self.answerer.aclose()
        if self.engine is not None:
            await dispose_engine(self.engine)
