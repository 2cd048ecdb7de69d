"""The reply pipeline on real components, for tests/app and tests/eval."""

from __future__ import annotations

from app.intents import IntentClassifier
from app.pipeline import ReplyPipeline
from app.router import SemanticRouter, load_bank
from gpu.data import GpuData
from gpu.fit.service import FitService
from gpu.quote.service import QuoteService
from infra.db import create_engine
from infra.settings import REPO_ROOT
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.rag.support import DEFAULT_EMBEDDER, keep_index, shared_chroma_dir, shared_retriever


def build_pipeline(semantic: bool = True) -> ReplyPipeline:
    """The reply pipeline on the real catalogs, rule book and (with ``semantic``) the e5 router."""
    data_dir = REPO_ROOT / "data"
    data = GpuData(data_dir)
    fit = FitService(data)
    rules = RuleBook(data_dir, glossary_file(data_dir))
    quotes = QuoteService(create_engine("sqlite+aiosqlite://"), data)
    pipeline = ReplyPipeline(data, fit, quotes, IntentClassifier(data, fit, rules), glossary_file(data_dir))
    if semantic:
        retriever = shared_retriever()
        assert retriever.embedder is not None
        router = SemanticRouter.build(load_bank(data_dir / "routes.yaml"), retriever.embedder.encode_queries,
                                      retriever.embedder.identity, shared_chroma_dir(DEFAULT_EMBEDDER) / "router")
        pipeline.attach_router(router, retriever.query_vector)
        keep_index(part="router")
    return pipeline
