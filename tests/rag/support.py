"""One real retriever per test session: the real glossary, the offline MiniLM, Chroma in a temp dir."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from infra.settings import DataSettings, RAGSettings, Settings
from rag.retriever import HybridRetriever, build_retriever


def rag_settings(chroma_path: Path, **overrides: object) -> Settings:
    return Settings(data=DataSettings(), rag=RAGSettings(chroma_path=chroma_path, chroma_url=None,
                                                         **overrides))  # type: ignore[arg-type]


@cache
def shared_chroma_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="anchorgpu-test-chroma-"))
    atexit.register(shutil.rmtree, path, True)
    return path


@cache
def shared_retriever() -> HybridRetriever:
    """Built once per process (the embedding of ~280 passages is the slow part) and shared by
    tests/rag and tests/eval."""
    return build_retriever(rag_settings(shared_chroma_dir()))
