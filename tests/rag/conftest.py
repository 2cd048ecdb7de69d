from __future__ import annotations

import pytest

from rag.retrieval.retriever import HybridRetriever
from tests.rag.support import shared_retriever


@pytest.fixture(scope="session")
def retriever() -> HybridRetriever:
    return shared_retriever()
