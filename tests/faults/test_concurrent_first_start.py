"""One writer for the embedded index: processes starting together on an empty folder all succeed."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from infra.settings import REPO_ROOT, RAGSettings
from rag.glossary import load_glossary
from rag.retrieval.dense import get_embedder
from rag.retrieval.index import IndexStoreError, folder_lock, index_version, open_index
from tests.rag.support import concurrent_searches

QUESTION = "what is a KV cache"


def test_four_first_starts_on_an_empty_folder_all_answer(tmp_path: Path) -> None:
    chroma = tmp_path / "state" / "chroma"
    results = concurrent_searches(4, QUESTION, ANCHORGPU_STATE_DIR=str(tmp_path / "state"),
                                  RAG_CHROMA_PATH=str(chroma))
    for code, _out, err in results:
        assert code == 0, err[-3000:]
    payloads = [json.loads(out) for _code, out, _err in results]
    assert all(p["in_scope"] and p["results"] for p in payloads)
    assert len({p["results"][0]["id"] for p in payloads}) == 1
    assert payloads[0]["results"][0]["id"].endswith("kv-cache")
    # exactly one process embedded the glossary; the others waited for it and only read
    writers = [err for _code, _out, err in results if "glossary index synced" in err]
    assert len(writers) == 1, [err[-500:] for _c, _o, err in results]


def test_a_stamped_index_is_read_without_comparing(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "chroma", chroma_url=None)
    embedder = get_embedder(settings.embedding_model)
    entries = load_glossary(REPO_ROOT / "data")[:6]
    first = open_index(settings, entries, embedder, with_vectors=True)
    assert first.report.added == 6 and first.vectors is not None and first.vectors.shape[0] == 6
    assert (first.collection.metadata or {})["index_version"] == index_version(entries, embedder)
    again = open_index(settings, entries, embedder)
    assert again.report.unchanged == 6 and again.report.added == 0 and not again.report.waited
    # the version ignores order but not content
    assert index_version(entries[::-1], embedder) == index_version(entries, embedder)
    assert index_version(entries[:5], embedder) != index_version(entries, embedder)


def test_a_held_folder_lock_makes_the_next_opener_wait(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "chroma", chroma_url=None)
    embedder = get_embedder(settings.embedding_model)
    entries = load_glossary(REPO_ROOT / "data")[:3]
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with folder_lock(settings.chroma_path):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    with pytest.raises(IndexStoreError, match="another process has held the Chroma index"):
        open_index(settings, entries, embedder, wait_s=0.3)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    opened = open_index(settings, entries, embedder)
    holder.join()
    assert opened.report.waited and opened.report.added == 3 and time.monotonic() - started >= 0.4
