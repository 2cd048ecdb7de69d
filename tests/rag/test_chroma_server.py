"""The same idempotent sync against a real Chroma server (`RAG_CHROMA_URL` → HttpClient)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.settings import REPO_ROOT, RAGSettings
from rag.dense import get_embedder
from rag.glossary import load_glossary
from rag.index import IndexStoreError, open_client, sync_index

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
