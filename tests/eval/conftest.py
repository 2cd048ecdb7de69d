from __future__ import annotations

import pytest

from app.pipeline import ReplyPipeline
from rag.retrieval.retriever import HybridRetriever
from tests.app.support import build_pipeline
from tests.rag.support import shared_retriever


@pytest.fixture(scope="session")
def retriever() -> HybridRetriever:
    return shared_retriever()


@pytest.fixture(scope="session")
def pipeline() -> ReplyPipeline:
    return build_pipeline()
