"""LLM runtime: one async streaming interface over llama.cpp in-process or an OpenAI-compatible server.

* :mod:`models.base` — the interface (:class:`LLMBackend`, chunks, errors);
* :mod:`models.llama_backend` — llama-cpp-python in the process (GPU offload with ``n_gpu_layers``);
* :mod:`models.http_backend` — ``/v1/chat/completions`` streaming over HTTP (``LLM_BASE_URL``);
* :mod:`models.queue` — the bounded, fair request queue in front of either.
"""

from __future__ import annotations

from infra.settings import LLMSettings
from models.base import (
    ChatMessage,
    Finished,
    GenerationError,
    GenerationParams,
    LLMBackend,
    LLMUnavailableError,
    StreamChunk,
    TextDelta,
)
from models.queue import QueueFullError, RequestCancelledError, RequestQueue, Ticket

__all__ = [
    "ChatMessage",
    "Finished",
    "GenerationError",
    "GenerationParams",
    "LLMBackend",
    "LLMUnavailableError",
    "QueueFullError",
    "RequestCancelledError",
    "RequestQueue",
    "StreamChunk",
    "TextDelta",
    "Ticket",
    "build_backend",
]


def build_backend(settings: LLMSettings) -> LLMBackend:
    """The HTTP backend when ``LLM_BASE_URL`` is set, otherwise llama.cpp in this process (not loaded yet)."""
    if settings.base_url:
        from models.http_backend import OpenAIHTTPBackend

        api_key = settings.api_key.get_secret_value() if settings.api_key else None
        return OpenAIHTTPBackend(settings.base_url, model=settings.remote_model, api_key=api_key,
                                 timeout_s=settings.request_timeout_s)
    from models.llama_backend import LlamaCppBackend

    return LlamaCppBackend(settings.model_path, n_gpu_layers=settings.n_gpu_layers, n_ctx=settings.n_ctx,
                           n_batch=settings.n_batch, threads=settings.threads,
                           prompt_cache_mb=settings.prompt_cache_mb,
                           lookup_draft_tokens=lookup_draft_tokens(settings))


GPU_LOOKUP_DRAFT_TOKENS = 15


def lookup_draft_tokens(settings: LLMSettings) -> int:
    """``LLM_LOOKUP_DRAFT_TOKENS``, or by default: on when the model runs on a GPU, where decoding is bound by
    memory bandwidth and a batch of drafted tokens costs about what one does; off on a CPU, where it costs
    nearly as much per token (``anchorgpu bench llm --sections lookup`` measures both sides)."""
    if settings.lookup_draft_tokens is not None:
        return settings.lookup_draft_tokens
    return GPU_LOOKUP_DRAFT_TOKENS if settings.n_gpu_layers else 0
