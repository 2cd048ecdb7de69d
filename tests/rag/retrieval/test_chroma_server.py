"""The same idempotent sync against a real Chroma server (`RAG_CHROMA_URL` → HttpClient)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.settings import REPO_ROOT, RAGSettings
from rag.glossary import load_glossary
from rag.retrieval.dense import get_embedder
from rag.retrieval.index import LEASE_SUFFIX, IndexStoreError, index_version, open_client, sync_index, sync_shared
from tests.rag.support import concurrent_searches

CHROMA = Path(sys.executable).parent / "chroma"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    if not CHROMA.exists() and shutil.which("chroma") is None:
        pytest.skip("the chroma server CLI is not installed")
    port = _free_port()
    server = subprocess.Popen([str(CHROMA), "run", "--path", str(tmp_path / "srv"), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_http_client_sync_is_idempotent(chroma_url: str, tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "unused", chroma_url=chroma_url)
    entries = load_glossary(REPO_ROOT / "data")[:5]
    embedder = get_embedder(settings.embedding_model)
    _, first = sync_index(open_client(settings), "glossary-http", entries, embedder)
    _, again = sync_index(open_client(settings), "glossary-http", entries, embedder)
    assert first.added == 5 and again.unchanged == 5 and again.added == again.updated == 0
    assert not (tmp_path / "unused").exists()


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path, chroma_url=f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(IndexStoreError, match="cannot open the Chroma index"):
        open_client(settings)


@pytest.mark.long
def test_four_first_starts_against_an_empty_server_all_answer(chroma_url: str, tmp_path: Path) -> None:
    results = concurrent_searches(4, "what is a KV cache", ANCHORGPU_STATE_DIR=str(tmp_path / "state"),
                                  RAG_CHROMA_URL=chroma_url, RAG_COLLECTION="glossary-race")
    for code, _out, err in results:
        assert code == 0, err[-3000:]
    payloads = [json.loads(out) for _code, out, _err in results]
    assert all(p["in_scope"] and p["results"] for p in payloads)
    assert {p["results"][0]["id"] for p in payloads} == {payloads[0]["results"][0]["id"]}
    writers = [err for _code, _out, err in results if "glossary index synced" in err]
    assert len(writers) == 1, [err[-500:] for _c, _o, err in results]
    client = open_client(RAGSettings(chroma_url=chroma_url))
    names = {c.name for c in client.list_collections()}
    assert "glossary-race" in names and "glossary-race" + LEASE_SUFFIX not in names  # the lease was released
    entries = load_glossary(REPO_ROOT / "data")
    collection = client.get_collection("glossary-race")
    assert collection.count() == len(entries)
    assert collection.metadata["index_version"] == index_version(entries, get_embedder(RAGSettings().embedding_model))


def test_a_live_lease_is_waited_for_and_a_dead_one_taken_over(chroma_url: str) -> None:
    client = open_client(RAGSettings(chroma_url=chroma_url))
    entries = load_glossary(REPO_ROOT / "data")[:3]
    embedder = get_embedder(RAGSettings().embedding_model)
    # another writer holds the lease and never finishes (killed without cleaning up)
    client.create_collection("glossary-lease" + LEASE_SUFFIX, metadata={"owner": "gone", "beat": 0})
    with pytest.raises(IndexStoreError, match="another process has been writing"):
        sync_shared(client, "glossary-lease", entries, embedder, wait_s=0.6, stale_s=30)
    started = time.monotonic()
    collection, report = sync_shared(client, "glossary-lease", entries, embedder, wait_s=30, stale_s=1)
    assert report.waited and report.added == 3 and time.monotonic() - started >= 1
    assert collection.count() == 3
    assert "glossary-lease" + LEASE_SUFFIX not in {c.name for c in client.list_collections()}
    # stamped: the next process reads without waiting or writing
    _, again = sync_shared(client, "glossary-lease", entries, embedder)
    assert again.unchanged == 3 and not again.waited
