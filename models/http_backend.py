"""OpenAI-compatible HTTP backend: llama.cpp's ``llama-server``, vLLM, ``python -m llama_cpp.server``.

Streams ``POST {base_url}/v1/chat/completions`` with ``stream=true`` and parses the server-sent events
(``data: {...}`` lines, ended by ``data: [DONE]``). Cancelling closes the connection; the servers above
stop generating when the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from typing import Any

import httpx

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

log = logging.getLogger(__name__)


class OpenAIHTTPBackend:
    def __init__(self, base_url: str, *, model: str = "default", api_key: str | None = None,
                 parallel: int = 1, timeout_s: float = 120.0, connect_timeout_s: float = 5.0) -> None:
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"
        self._model = model
        self._parallel = parallel
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url, headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
        )

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def parallel(self) -> int:
        return self._parallel

    @property
    def caches_prompts(self) -> bool:
        return False  # a server's own prefix cache is its business

    async def load(self) -> None:
        """Check the server answers and learn the model name when the setting leaves it as "default"."""
        try:
            response = await self._client.get("/models")
            response.raise_for_status()
            models = response.json().get("data") or []
        except (httpx.HTTPError, ValueError) as exc:
            raise LLMUnavailableError(f"LLM server {self.base_url} is not reachable: {exc}") from exc
        if self._model == "default" and models:
            self._model = str(models[0].get("id") or self._model)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    async def stream(self, messages: list[ChatMessage], params: GenerationParams,
                     cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if params.stop:
            payload["stop"] = list(params.stop)
        pieces: list[str] = []
        usage: dict[str, Any] | None = None
        reason = "stop"
        try:
            async with self._client.stream("POST", "/chat/completions", json=payload) as response:
                if response.status_code >= 400:
                    body = (await response.aread()).decode("utf-8", "replace")[:300]
                    raise GenerationError(f"LLM server answered {response.status_code}: {body}")
                async for line in response.aiter_lines():
                    if cancel is not None and cancel.is_set():
                        reason = "cancelled"
                        break
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    event = json.loads(data)
                    if event.get("usage"):
                        usage = event["usage"]
                    for choice in event.get("choices") or []:
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            pieces.append(text)
                            yield TextDelta(text)
                        if choice.get("finish_reason"):
                            reason = choice["finish_reason"]
        except httpx.ConnectError as exc:
            raise LLMUnavailableError(f"LLM server {self.base_url} is not reachable: {exc}") from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise GenerationError(f"LLM server stream failed: {exc}") from exc
        completion = int(usage["completion_tokens"]) if usage else len(pieces)
        prompt = int(usage["prompt_tokens"]) if usage else 0
        yield Finished(prompt_tokens=prompt, completion_tokens=completion, finish_reason=reason)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._client.aclose()
