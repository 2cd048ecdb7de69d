"""The persistent vector index in Chroma, kept in sync with the glossary by content hash.

`sync_index` is idempotent: unchanged entries are left alone (a re-run embeds nothing), new or changed
entries are (re-)embedded and upserted, entries gone from the glossary are deleted, and a different
embedding model (or prompt) rebuilds the collection instead of mixing vector spaces.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np

from infra.settings import RAGSettings
from rag.dense import Embedder
from rag.glossary import GlossaryEntry

log = logging.getLogger(__name__)
UPSERT_BATCH = 256


class IndexStoreError(RuntimeError):
    """The vector store cannot be reached or opened; phrased for the user."""


@dataclass(frozen=True)
class SyncReport:
    total: int
    added: int
    updated: int
    deleted: int
    unchanged: int
    rebuilt: bool
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, "added": self.added, "updated": self.updated, "deleted": self.deleted,
                "unchanged": self.unchanged, "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3)}


def open_client(rag: RAGSettings) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if rag.chroma_url:
            url = urlparse(rag.chroma_url)
            return chromadb.HttpClient(host=url.hostname or "localhost", port=url.port or 8000,
                                       ssl=url.scheme == "https", settings=chroma_settings)
        rag.chroma_path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(rag.chroma_path), settings=chroma_settings)
    except Exception as exc:
        where = rag.chroma_url or rag.chroma_path
        raise IndexStoreError(f"cannot open the Chroma index at {where}: {exc}") from None


def _collection(client: Any, name: str, embedder: Embedder, rebuild: bool) -> tuple[Any, bool]:
    metadata = {"embedder": embedder.identity, "hnsw:space": "cosine"}
    existing = None
    try:
        existing = client.get_collection(name, embedding_function=None)
    except Exception:
        existing = None
    rebuilt = False
    if existing is not None and (rebuild or (existing.metadata or {}).get("embedder") != embedder.identity):
        client.delete_collection(name)
        existing, rebuilt = None, True
    if existing is None:
        try:
            existing = client.create_collection(name, metadata=metadata, embedding_function=None)
        except Exception as exc:
            raise IndexStoreError(f"cannot create the Chroma collection {name!r} (RAG_COLLECTION): {exc}") from None
    return existing, rebuilt


def sync_index(client: Any, collection_name: str, entries: list[GlossaryEntry], embedder: Embedder,
               rebuild: bool = False) -> tuple[Any, SyncReport]:
    started = time.perf_counter()
    collection, rebuilt = _collection(client, collection_name, embedder, rebuild)
    stored = collection.get(include=["metadatas"])
    stored_hash = {i: (m or {}).get("hash") for i, m in zip(stored["ids"], stored["metadatas"], strict=True)}
    wanted = {e.id: e for e in entries}
    stale = [i for i in stored_hash if i not in wanted]
    todo = [e for e in entries if stored_hash.get(e.id) != e.content_hash()]
    if stale:
        collection.delete(ids=stale)
    for start in range(0, len(todo), UPSERT_BATCH):
        batch = todo[start:start + UPSERT_BATCH]
        vectors = embedder.encode_passages([e.passage() for e in batch])
        collection.upsert(
            ids=[e.id for e in batch],
            embeddings=vectors.tolist(),
            documents=[e.passage() for e in batch],
            metadatas=[{"hash": e.content_hash(), "term": e.term, "source": e.source, "concept": e.concept,
                        "category": e.category} for e in batch],
        )
    added = sum(1 for e in todo if e.id not in stored_hash)
    report = SyncReport(total=len(entries), added=added, updated=len(todo) - added, deleted=len(stale),
                        unchanged=len(entries) - len(todo), rebuilt=rebuilt,
                        seconds=time.perf_counter() - started)
    if todo or stale:
        log.info("glossary index synced: %s", report.as_dict())
    return collection, report


def load_vectors(collection: Any, entries: list[GlossaryEntry]) -> np.ndarray:
    """The stored vectors, in glossary order, as a normalised matrix for in-process search."""
    stored = collection.get(ids=[e.id for e in entries], include=["embeddings"])
    by_id = dict(zip(stored["ids"], stored["embeddings"], strict=True))
    matrix = np.asarray([by_id[e.id] for e in entries], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)
