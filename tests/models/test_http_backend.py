"""The OpenAI-compatible HTTP backend against a real ``python -m llama_cpp.server`` on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from models.base import ChatMessage, Finished, GenerationParams, LLMUnavailableError, TextDelta
from models.http_backend import OpenAIHTTPBackend
from tests.conftest import SMALL_MODEL

MESSAGES = [ChatMessage("user", "Say hello in one short sentence.")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log_path: Path = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(SMALL_MODEL), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "1024", "--n_threads", "2", "--verbose", "False"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, f"server exited: {log_path.read_text(errors='replace')[-2000:]}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/v1/models", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, "llama_cpp.server did not start in 90 s"
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
async def backend(server_url: str) -> AsyncIterator[OpenAIHTTPBackend]:
    llm = OpenAIHTTPBackend(server_url)
    await llm.load()
    yield llm
    await llm.aclose()


async def test_streams_over_sse_and_learns_the_model_name(backend: OpenAIHTTPBackend) -> None:
    assert backend.model_name == str(SMALL_MODEL)  # llama_cpp.server names the model by its path
    chunks = [c async for c in backend.stream(MESSAGES, GenerationParams(max_tokens=10, temperature=0.0))]
    deltas = [c for c in chunks if isinstance(c, TextDelta)]
    assert len(deltas) >= 2
    assert "".join(d.text for d in deltas).strip()
    finished = chunks[-1]
    assert isinstance(finished, Finished)
    assert 1 <= finished.completion_tokens <= 10


async def test_cancel_stops_the_stream(backend: OpenAIHTTPBackend) -> None:
    cancel = asyncio.Event()
    count = 0
    last: Finished | None = None
    prompt = [ChatMessage("user", "Write a long story about a GPU.")]
    async for chunk in backend.stream(prompt, GenerationParams(max_tokens=200), cancel=cancel):
        if isinstance(chunk, TextDelta):
            count += 1
            if count == 2:
                cancel.set()
        else:
            last = chunk
    assert last is not None and last.finish_reason == "cancelled"
    assert count == 2
    # The server is still usable after the client hung up.
    again = [c async for c in backend.stream(MESSAGES, GenerationParams(max_tokens=3))]
    assert isinstance(again[-1], Finished)


async def test_unreachable_server_is_unavailable() -> None:
    llm = OpenAIHTTPBackend(f"http://127.0.0.1:{_free_port()}", connect_timeout_s=1)
    with pytest.raises(LLMUnavailableError, match="not reachable"):
        await llm.load()
    with pytest.raises(LLMUnavailableError):
        [c async for c in llm.stream(MESSAGES, GenerationParams(max_tokens=3))]
    await llm.aclose()
