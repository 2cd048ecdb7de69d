"""In-process llama.cpp backend (llama-cpp-python).

The chat template comes from the GGUF metadata (``chat_format=None`` makes llama-cpp-python render the
model's own Jinja template). Generation is blocking, so it runs on one dedicated worker thread; each
token is handed to the event loop with ``loop.call_soon_threadsafe``. A ``threading.Event`` checked
between tokens stops the generation when the caller cancels.

llama-cpp-python keeps the KV cache of the previous prompt and reuses its longest common prefix, which
is why prompts put their static instructions first. It keeps one prompt: a Russian question (asked under
Russian rules) evaluates another system prompt than an English one, and the next question evaluated its own again
(about 4 s for ~590 tokens on 2 cores). A RAM cache of evaluated states (``LLM_PROMPT_CACHE_MB``, 64 MB by
default; 0 turns it off) keeps both: a prompt starts from the cached state sharing its longest prefix (0.1 s
instead of 4 s). The answer ends (:class:`Finished`) with its last token, before the library saves the state.

``lookup_draft_tokens`` turns on speculative decoding by prompt lookup (:mod:`models.prompt_lookup`): the library's
own loop with ``Llama.draft_model`` set, and an ``eval`` that asks for every position's logits only in a draft's
batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from models.base import (
    ChatMessage,
    Finished,
    GenerationError,
    GenerationParams,
    LLMUnavailableError,
    StreamChunk,
    TextDelta,
    estimate_tokens,
)
from models.prompt_lookup import PromptLookupDraft, enable_prompt_lookup

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
_END = object()


def check_gguf_file(path: Path) -> None:
    """Fail early, with a readable reason, on a missing or obviously corrupt model file."""
    if not path.exists():
        raise LLMUnavailableError(f"model file not found: {path}")
    if not path.is_file():
        raise LLMUnavailableError(f"model path is not a file: {path}")
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise LLMUnavailableError(f"not a GGUF model file (bad header): {path}")


SAME_PROMPT_TOKENS = 64  # prompts sharing this many first tokens share their system prompt


def prompt_state_cache(capacity_bytes: int) -> Any:
    """llama-cpp-python's RAM cache of evaluated states, kept small: one state per system prompt (the
    latest), each without the logits buffer (see :func:`lean_state`)."""
    import llama_cpp

    class PromptStateCache(llama_cpp.LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            key = tuple(key)
            for other in [k for k in self.cache_state if llama_cpp.Llama.longest_token_prefix(k, key)
                          >= SAME_PROMPT_TOKENS]:
                del self.cache_state[other]
            super().__setitem__(key, value)

    return PromptStateCache(capacity_bytes=capacity_bytes)


def lean_state(llm: Any) -> Any:
    """``Llama.save_state`` (llama-cpp-python 0.3.36) without copying the logits buffer.

    The library's copy is up to n_batch × vocabulary floats (311 MB for Qwen2.5) after every completion,
    outside the cache's capacity: the soak saw RSS grow by 2.5 GB, and the copy delayed the end of each
    answer. A restored state never samples from those logits (see :func:`lean_restore`), so one zero row
    stands in for them.
    """
    import ctypes

    import llama_cpp
    import numpy as np

    # one allocation the context writes into and the cache keeps (the library copies it twice more)
    size = int(llama_cpp.llama_state_get_size(llm._ctx.ctx))
    data = bytearray(size)
    n_bytes = int(llama_cpp.llama_state_get_data(llm._ctx.ctx, (ctypes.c_uint8 * size).from_buffer(data), size))
    if n_bytes > size:
        raise RuntimeError("failed to copy the llama state")
    del data[n_bytes:]
    return llama_cpp.LlamaState(scores=np.zeros((1, llm.n_vocab()), dtype=np.single),
                                input_ids=llm.input_ids.copy(), n_tokens=llm.n_tokens,
                                llama_state=data, llama_state_size=n_bytes,  # type: ignore[arg-type]
                                seed=llm._seed)  # a bytearray, read in place by lean_restore


def lean_restore(llm: Any, state: Any) -> None:
    """``Llama.load_state`` (llama-cpp-python 0.3.36) without writing the logits buffer.

    The library fills the first ``n_tokens`` rows of its n_batch × vocabulary logits buffer from the state
    and scans the rest: the buffer is allocated lazily, so the first restore made up to 311 MB of it
    resident (the soak's RSS grew by a third) for logits nothing reads (sampling reads the context's own,
    after the decode a restored state always gets first).
    """
    import ctypes

    import llama_cpp

    llm.input_ids = state.input_ids.copy()
    llm.n_tokens = state.n_tokens
    llm._requires_eval = True
    llm._seed = state.seed
    size = state.llama_state_size
    view = ctypes.c_uint8 * size
    # a state of :func:`lean_state` is read in place; another (bytes) is copied as the library does
    data = state.llama_state
    buffer = view.from_buffer(data) if isinstance(data, bytearray) else view.from_buffer_copy(data)
    if llama_cpp.llama_state_set_data(llm._ctx.ctx, buffer, size) != size:
        raise RuntimeError("failed to set the llama state")


def available_cpus() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LlamaCppBackend:
    def __init__(self, model_path: Path, *, n_gpu_layers: int = 0, n_ctx: int = 4096, n_batch: int = 512,
                 threads: int | None = None, chat_format: str | None = None, seed: int = 0,
                 prompt_cache_mb: int = 0, lookup_draft_tokens: int = 0) -> None:
        self.model_path = Path(model_path)
        self.n_gpu_layers = n_gpu_layers
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self.threads = threads
        self.chat_format = chat_format
        self.seed = seed
        self.prompt_cache_mb = prompt_cache_mb
        self.lookup_draft_tokens = lookup_draft_tokens
        self._llm: Any = None
        # One context, one thread: llama_cpp.Llama is not safe for concurrent calls.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self.model_path.name

    @property
    def parallel(self) -> int:
        return 1

    @property
    def caches_prompts(self) -> bool:
        return self.prompt_cache_mb > 0

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (benchmarks compare against it directly)."""
        if self._llm is None:
            raise LLMUnavailableError("model is not loaded")
        return self._llm

    def _load_sync(self) -> Any:
        import llama_cpp  # heavy native import, only when a model is actually loaded

        kwargs: dict[str, Any] = {
            "model_path": str(self.model_path),
            "n_gpu_layers": self.n_gpu_layers,
            "n_ctx": self.n_ctx,
            "n_batch": self.n_batch,
            "chat_format": self.chat_format,
            "seed": self.seed,
            "verbose": False,
        }
        # llama-cpp-python decodes on half the cores by default: on 2 cores that is one thread, 25 tokens/s
        # where two give 40 (measured side by side), and every answer waits on decoding
        threads = self.threads or available_cpus()
        kwargs["n_threads"] = threads
        kwargs["n_threads_batch"] = threads
        llm = llama_cpp.Llama(**kwargs)
        if self.prompt_cache_mb:
            llm.set_cache(prompt_state_cache(self.prompt_cache_mb << 20))
            # what the library calls to fill the cache after each completion, and to restore from it
            llm.save_state = functools.partial(lean_state, llm)  # type: ignore[method-assign]
            llm.load_state = functools.partial(lean_restore, llm)  # type: ignore[method-assign]
        if self.lookup_draft_tokens:
            enable_prompt_lookup(llm, self.lookup_draft_tokens)
        return llm

    async def load(self) -> None:
        if self._llm is not None:
            return
        check_gguf_file(self.model_path)
        loop = asyncio.get_running_loop()
        try:
            self._llm = await loop.run_in_executor(self._executor, self._load_sync)
        except Exception as exc:  # llama.cpp reports every load failure as a plain exception
            raise LLMUnavailableError(f"cannot load {self.model_path.name}: {exc}") from exc
        log.info("loaded %s (n_ctx=%d, n_gpu_layers=%d)", self.model_path.name, self.n_ctx,
                 self.n_gpu_layers)

    def count_tokens(self, text: str) -> int:
        if self._llm is None or not text:
            return estimate_tokens(text)
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def reset_cache(self) -> None:
        """Forget the cached prompt prefix (benchmarks use it to measure a cold start)."""
        with self._lock:
            if self._llm is not None:
                self._llm.reset()  # n_tokens = 0: the next prompt is evaluated from scratch
                if self._llm.cache is not None:
                    self._llm.cache.cache_state.clear()

    def _generate(self, messages: list[ChatMessage], params: GenerationParams, stop_flag: threading.Event,
                  emit: Any) -> None:
        llm = self.llama
        with self._lock:
            completion_text: list[str] = []
            reason = "stop"
            finished = False
            if llm.draft_model is not None:
                llm.draft_model.begin()
            stream = llm.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                stream=True,
                max_tokens=params.max_tokens,
                temperature=params.temperature,
                stop=list(params.stop) or None,
            )
            try:
                for chunk in stream:
                    if stop_flag.is_set():
                        reason = "cancelled"
                        break
                    choice = chunk["choices"][0]
                    text = choice.get("delta", {}).get("content")
                    if text:
                        completion_text.append(text)
                        emit(TextDelta(text))
                    if choice.get("finish_reason") and not finished:
                        # the answer is complete: the consumer need not wait for the library's
                        # bookkeeping after it (saving the state to the prompt cache), which stays under the lock
                        finished = True
                        emit(self._finished(llm, completion_text, choice["finish_reason"]))
            except Exception:
                if not finished:
                    raise
                log.warning("llama.cpp failed after the answer's last token", exc_info=True)
            finally:
                with contextlib.suppress(Exception):
                    stream.close()
            if not finished:
                emit(self._finished(llm, completion_text, reason))

    def _finished(self, llm: Any, completion_text: list[str], reason: str) -> Finished:
        full = "".join(completion_text)
        completion_tokens = self.count_tokens(full) if full else 0
        drafter = llm.draft_model
        prompt_tokens = (drafter.prompt_tokens if isinstance(drafter, PromptLookupDraft) and drafter.prompt_tokens
                         else max(0, int(llm.n_tokens) - completion_tokens))
        return Finished(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, finish_reason=reason)

    async def stream(self, messages: list[ChatMessage], params: GenerationParams,
                     cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        self.llama  # raises LLMUnavailableError before any thread is started  # noqa: B018
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        stop_flag = threading.Event()

        def emit(item: object) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                self._generate(messages, params, stop_flag, emit)
            except BaseException as exc:  # handed to the consumer, raised there
                emit(exc)
            finally:
                emit(_END)

        watcher: asyncio.Task[None] | None = None
        if cancel is not None:
            async def watch() -> None:
                await cancel.wait()
                stop_flag.set()

            watcher = asyncio.create_task(watch())
        worker = loop.run_in_executor(self._executor, work)
        finished = False
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise GenerationError(f"generation failed: {item}") from item
                assert isinstance(item, TextDelta | Finished)
                yield item
                if isinstance(item, Finished):
                    finished = True
                    break
        finally:
            stop_flag.set()
            if watcher is not None:
                watcher.cancel()
            if not finished:  # stopped early: wait for the worker, so the next request never overlaps this one
                with contextlib.suppress(Exception):
                    await asyncio.shield(worker)
            # after the last token the worker only finishes the library's bookkeeping (the prompt cache's
            # save); the next request's work queues behind it on the same thread

    async def aclose(self) -> None:
        llm, self._llm = self._llm, None
        if llm is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, llm.close)
        self._executor.shutdown(wait=False)
