"""The in-process llama.cpp backend on the real small model: streaming, cancellation, bad model files."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from models.base import ChatMessage, Finished, GenerationParams, LLMUnavailableError, TextDelta
from models.llama_backend import LlamaCppBackend
from tests.conftest import SMALL_MODEL

MESSAGES = [ChatMessage("system", "You are a helpful assistant."),
            ChatMessage("user", "Name three colours of the rainbow.")]


@pytest.fixture(scope="module")
async def backend() -> AsyncIterator[LlamaCppBackend]:
    llm = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2)
    await llm.load()
    yield llm
    await llm.aclose()


async def test_streams_deltas_then_usage(backend: LlamaCppBackend) -> None:
    chunks = [c async for c in backend.stream(MESSAGES, GenerationParams(max_tokens=12, temperature=0.0))]
    deltas = [c for c in chunks if isinstance(c, TextDelta)]
    assert len(deltas) >= 2, "text arrives token by token, not in one piece"
    assert "".join(d.text for d in deltas).strip()
    finished = chunks[-1]
    assert isinstance(finished, Finished)
    assert [c for c in chunks if isinstance(c, Finished)] == [finished]
    assert 1 <= finished.completion_tokens <= 12
    assert finished.prompt_tokens > 10
    assert finished.finish_reason in {"stop", "length"}
    assert backend.model_name == SMALL_MODEL.name


async def test_cancel_event_stops_generation_and_frees_the_context(backend: LlamaCppBackend) -> None:
    cancel = asyncio.Event()
    received: list[str] = []
    finished: Finished | None = None
    params = GenerationParams(max_tokens=200, temperature=0.0)
    long_prompt = [ChatMessage("user", "Write a long story about a GPU that learns to sing.")]
    async for chunk in backend.stream(long_prompt, params, cancel=cancel):
        if isinstance(chunk, TextDelta):
            received.append(chunk.text)
            if len(received) == 3:
                cancel.set()
        else:
            finished = chunk
    assert finished is not None and finished.finish_reason == "cancelled"
    assert finished.completion_tokens < 20
    # Closing the consumer early stops it too, and the next request runs normally afterwards.
    async with contextlib.aclosing(backend.stream(long_prompt, params)) as stream:
        async for _ in stream:
            break
    again = [c async for c in backend.stream(MESSAGES, GenerationParams(max_tokens=4))]
    assert isinstance(again[-1], Finished)


async def test_missing_model_file_is_reported_not_raised_raw(tmp_path: Path) -> None:
    llm = LlamaCppBackend(tmp_path / "nope.gguf")
    with pytest.raises(LLMUnavailableError, match="model file not found"):
        await llm.load()
    with pytest.raises(LLMUnavailableError):
        [c async for c in llm.stream(MESSAGES, GenerationParams())]
    await llm.aclose()


@pytest.mark.parametrize("content", [b"this is not a model" * 100, "gguf-prefix"])
async def test_corrupt_model_file_is_reported(tmp_path: Path, content: bytes | str) -> None:
    path = tmp_path / "corrupt.gguf"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:  # a real header followed by a truncated body
        path.write_bytes(SMALL_MODEL.read_bytes()[: 1 << 20])
    llm = LlamaCppBackend(path)
    with pytest.raises(LLMUnavailableError, match=r"corrupt\.gguf"):
        await llm.load()
    await llm.aclose()


async def test_the_prompt_cache_keeps_both_prefixes_and_changes_no_answer() -> None:
    """Alternating system prompts (the answerer's retry under Russian rules, then the next question under
    the default ones) restore a cached state instead of evaluating again; the text is the same."""
    other = [ChatMessage("system", "Ты полезный ассистент. Отвечай по-русски."), MESSAGES[1]]
    greedy = GenerationParams(max_tokens=8, temperature=0.0)

    async def texts(llm: LlamaCppBackend) -> list[str]:
        out = []
        for messages in (MESSAGES, other, MESSAGES, other):
            out.append("".join([c.text async for c in llm.stream(messages, greedy) if isinstance(c, TextDelta)]))
        return out

    cached = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2, prompt_cache_mb=64)
    plain = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2)
    for llm in (cached, plain):
        await llm.load()
    try:
        assert await texts(cached) == await texts(plain)
        states = cached.llama.cache.cache_state
        assert len({key[:12] for key in states}) == len(states) == 2, "one state per system prompt"
        assert all(state.scores.nbytes < 1 << 20 for state in states.values()), "no logits buffer kept"
        assert plain.llama.cache is None
        cached.reset_cache()
        assert not cached.llama.cache.cache_state, "a cold start is cold"
    finally:
        for llm in (cached, plain):
            await llm.aclose()


@pytest.mark.long
async def test_restoring_a_cached_prompt_leaves_the_logits_buffer_alone() -> None:
    """llama-cpp-python's own ``load_state`` writes a row of its n_batch × vocabulary logits buffer per
    restored token, a buffer allocated lazily: with a prompt longer than the batch all of it (311 MB for the
    default model's vocabulary) became resident, for logits nothing reads. The soak's RSS grew by a third."""
    long_rules = " ".join(f"Rule {n}: answer only from the glossary and cite it." for n in range(60))
    first = [ChatMessage("system", long_rules), MESSAGES[1]]
    second = [ChatMessage("system", "Ты полезный ассистент. " + long_rules), MESSAGES[1]]
    greedy = GenerationParams(max_tokens=4, temperature=0.0)
    cached = LlamaCppBackend(SMALL_MODEL, n_ctx=2048, n_batch=512, threads=2, prompt_cache_mb=64)
    await cached.load()
    try:
        texts = []
        for messages in (first, second, first):  # the third is restored from the cache
            if messages is first and texts:
                assert cached.llama.n_tokens > 512, "the prompt is longer than the batch"
                cached.llama.scores[:2] = 7.0  # a row the library's restore would overwrite
            texts.append("".join([c.text async for c in cached.stream(messages, greedy)
                                  if isinstance(c, TextDelta)]))
        assert (cached.llama.scores[:2] == 7.0).all(), "the restore wrote the logits buffer"
        assert texts[2] and len(cached.llama.cache.cache_state) == 2
    finally:
        await cached.aclose()
