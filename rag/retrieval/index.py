"""The persistent vector index in Chroma, kept in sync with the glossary by content hash.

`sync_index` is idempotent: unchanged entries are left alone (a re-run embeds nothing), new or changed
entries are (re-)embedded and upserted, entries gone from the glossary are deleted, and a different
embedding model (or prompt) rebuilds the collection instead of mixing vector spaces. A complete sync
stamps the collection with its *index version* (a hash of the embedder identity and of every entry's id
and content hash), so a process whose glossary matches the stamp reads without comparing anything.

One writer at a time (`open_index`, used by the bot, `anchorgpu search` and `anchorgpu ingest`):

A start whose glossary and embedder match a version the writer completed reads that version's vectors
from a snapshot beside the embedded index (``anchorgpu-vectors-<version>.npz``): one file, without importing
or opening Chroma (about a second of a fresh ``anchorgpu search``). The version names the file, so a snapshot
never serves another glossary; Chroma stays the index the writer syncs.

* Embedded folder (`RAG_CHROMA_PATH`): opening the folder and syncing it run under an inter-process
  file lock (`filelock`, ``<folder>.lock`` beside it). Chroma's embedded SQLite is not safe for several
  processes creating or migrating it at once (two fresh starts failed with "database is locked" and
  "table collections already exists"); under the lock the first process builds, the next ones find the
  stamp and only read. The OS drops the lock with its holder, so a killed process never blocks the others.
* Chroma server (`RAG_CHROMA_URL`): there is no shared folder to lock, so the writer is elected through
  the server itself. Creating a collection is the one atomic operation Chroma offers (names are unique),
  so whoever creates the lease collection ``<collection>.writer`` writes; the others' create fails and
  they wait until the stamp equals their own version, then read. The writer beats the lease between
  batches; a waiter that sees no beat for `LEASE_STALE_S` (measured on its own clock, so clock skew
  between hosts does not matter) treats the writer as dead, removes the lease and runs the election
  again. An election through a lock table in the application database would also work but ties the
  index to DB_URL and needs the database up before Chroma; the lease keeps the index self-contained.
  Correctness does not rest on the election: the writes are idempotent (upserts by id of vectors
  determined by the content), so the rare double writer after a takeover race does the work twice and
  ends in the same state. What the election buys is that N replicas starting together embed once and
  never race on create/delete of the collection. `anchorgpu ingest` takes the same lease.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from filelock import FileLock, Timeout

from infra.files import write_atomically
from infra.settings import RAGSettings
from rag.glossary import GlossaryEntry
from rag.retrieval.dense import Embedder

log = logging.getLogger(__name__)
UPSERT_BATCH = 256
VERSION_KEY = "index_version"  # collection metadata: the version of the last complete sync
LEASE_SUFFIX = ".writer"
LEASE_STALE_S = 120.0  # a writer beats at least once per upsert batch (a few seconds on a CPU)
WAIT_S = 1800.0  # the longest a process waits for another one building the index
POLL_S = 0.5
LOCK_FILE = "anchorgpu-writer.lock"  # inside the embedded folder (a mounted volume may be the folder itself)
SNAPSHOT_PREFIX = "anchorgpu-vectors-"  # beside the embedded index: the vectors of one index version


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
    waited: bool = False  # another process was writing the index; this one waited for it

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, "added": self.added, "updated": self.updated, "deleted": self.deleted,
                "unchanged": self.unchanged, "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3),
                "waited": self.waited}


@dataclass(frozen=True)
class OpenIndex:
    collection: Any
    report: SyncReport
    vectors: np.ndarray | None  # the normalised matrix, when asked for


def index_version(entries: list[GlossaryEntry], embedder: Embedder) -> str:
    """Equal for the same embedder and the same entries (in any order): what a complete sync stamps."""
    digest = hashlib.sha256(embedder.identity.encode())
    for entry_id, content in sorted((e.id, e.content_hash()) for e in entries):
        digest.update(f"\n{entry_id}\t{content}".encode())
    return digest.hexdigest()[:32]


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


def open_index(rag: RAGSettings, entries: list[GlossaryEntry], embedder: Embedder, rebuild: bool = False,
               with_vectors: bool = False, wait_s: float = WAIT_S) -> OpenIndex:
    """Opens the configured store and brings it in line with `entries`, one writer at a time (see above)."""
    if rag.chroma_url:
        client = open_client(rag)
        collection, report = sync_shared(client, rag.collection, entries, embedder, rebuild, wait_s=wait_s)
        return OpenIndex(collection, report, load_vectors(collection, entries) if with_vectors else None)
    version = index_version(entries, embedder)
    if with_vectors and not rebuild:
        snapshot = read_snapshot(rag.chroma_path, version, entries)
        if snapshot is not None:  # the stamped vectors of exactly this glossary: no Chroma to open
            return OpenIndex(None, SyncReport(total=len(entries), added=0, updated=0, deleted=0,
                                              unchanged=len(entries), rebuilt=False, seconds=0.0), snapshot)
    with folder_lock(rag.chroma_path, wait_s) as waited:
        collection, report = sync_index(open_client(rag), rag.collection, entries, embedder, rebuild)
        # read under the lock too: a writer in another process may otherwise hold SQLite's write lock
        vectors = load_vectors(collection, entries) if with_vectors else None
        if vectors is not None:
            write_snapshot(rag.chroma_path, version, entries, vectors)
    return OpenIndex(collection, _waited(report, waited), vectors)


def _snapshot_path(folder: Path, version: str) -> Path:
    return folder / f"{SNAPSHOT_PREFIX}{version}.npz"


def read_snapshot(folder: Path, version: str, entries: list[GlossaryEntry]) -> np.ndarray | None:
    """The normalised vectors of index version ``version`` in glossary order, or None (no snapshot, or one
    that cannot be read: the caller opens Chroma as usual)."""
    path = _snapshot_path(folder, version)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            ids, matrix = [str(i) for i in data["ids"]], np.asarray(data["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError):
        log.warning("unreadable vector snapshot %s; reading the Chroma index instead", path, exc_info=True)
        return None
    position = {entry_id: row for row, entry_id in enumerate(ids)}
    if len(matrix) != len(ids) or any(e.id not in position for e in entries):
        return None
    return matrix[[position[e.id] for e in entries]]


def write_snapshot(folder: Path, version: str, entries: list[GlossaryEntry], vectors: np.ndarray) -> None:
    """Keeps the vectors of the stamped version beside the index (written whole, then renamed), so that a
    start with the same glossary and embedder reads one file instead of importing and opening Chroma.
    Called by the writer, under the folder lock; other versions' snapshots are removed."""
    path = _snapshot_path(folder, version)
    try:
        if not path.is_file():
            write_atomically(path, lambda out: np.savez(out, ids=np.array([e.id for e in entries]), vectors=vectors))
        for old in folder.glob(f"{SNAPSHOT_PREFIX}*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # a read-only folder only loses the shortcut
        log.warning("could not write the vector snapshot %s", path, exc_info=True)


@contextlib.contextmanager
def folder_lock(folder: Path, wait_s: float = WAIT_S) -> Iterator[bool]:
    """Holds the embedded folder's writer lock; yields whether another process held it first."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexStoreError(f"cannot open the Chroma index at {folder}: {exc}") from None
    lock = FileLock(folder / LOCK_FILE)
    waited = False
    try:
        lock.acquire(timeout=0)
    except Timeout:
        waited = True
        log.info("another process is opening the glossary index at %s; waiting for it", folder)
        try:
            lock.acquire(timeout=wait_s)
        except Timeout:
            raise IndexStoreError(f"another process has held the Chroma index at {folder} for over "
                                  f"{wait_s:.0f} s ({folder / LOCK_FILE}); is an ingest stuck?") from None
    except OSError as exc:
        raise IndexStoreError(f"cannot lock the Chroma index at {folder}: {exc}") from None
    try:
        yield waited
    finally:
        lock.release()


def _waited(report: SyncReport, waited: bool) -> SyncReport:
    return replace(report, waited=True) if waited else report


def _get(client: Any, name: str) -> Any | None:
    """The collection, or None when it does not exist; an unreachable store is an IndexStoreError."""
    from chromadb.errors import NotFoundError

    try:
        return client.get_collection(name, embedding_function=None)
    except (NotFoundError, ValueError):  # ValueError: how older Chroma versions said "does not exist"
        return None
    except Exception as exc:
        raise IndexStoreError(f"cannot read the Chroma collection {name!r}: {exc}") from None


def _stamp(collection: Any) -> str:
    return str((collection.metadata or {}).get(VERSION_KEY) or "")


def _set_stamp(collection: Any, embedder: Embedder, version: str) -> None:
    # modify() replaces the whole metadata; the distance ("hnsw:space") lives in the configuration and
    # may not be passed again
    collection.modify(metadata={"embedder": embedder.identity, VERSION_KEY: version or "-"})


def _collection(client: Any, name: str, embedder: Embedder, rebuild: bool) -> tuple[Any, bool]:
    metadata = {"embedder": embedder.identity, "hnsw:space": "cosine"}
    existing = _get(client, name)
    rebuilt = False
    if existing is not None and (rebuild or (existing.metadata or {}).get("embedder") != embedder.identity):
        with contextlib.suppress(Exception):  # already gone: another writer got there first
            client.delete_collection(name)
        existing, rebuilt = None, True
    if existing is None:
        try:
            existing = client.create_collection(name, metadata=metadata, embedding_function=None)
        except Exception as exc:
            existing = _get(client, name)  # created meanwhile by another writer: the sync below completes it
            if existing is None:
                raise IndexStoreError(
                    f"cannot create the Chroma collection {name!r} (RAG_COLLECTION): {exc}") from None
    return existing, rebuilt


def sync_index(client: Any, collection_name: str, entries: list[GlossaryEntry], embedder: Embedder,
               rebuild: bool = False, beat: Callable[[], None] | None = None) -> tuple[Any, SyncReport]:
    """Brings the collection in line with `entries`. The caller makes sure it is the only writer
    (`open_index`); `beat` is called between batches to show it is alive."""
    started = time.perf_counter()
    version = index_version(entries, embedder)
    collection, rebuilt = _collection(client, collection_name, embedder, rebuild)
    if not rebuilt and _stamp(collection) == version:
        return collection, SyncReport(total=len(entries), added=0, updated=0, deleted=0, unchanged=len(entries),
                                      rebuilt=False, seconds=time.perf_counter() - started)
    if _stamp(collection):
        _set_stamp(collection, embedder, "")  # a reader of the old version must not trust a collection in change
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
        if beat is not None:
            beat()
    _set_stamp(collection, embedder, version)
    added = sum(1 for e in todo if e.id not in stored_hash)
    report = SyncReport(total=len(entries), added=added, updated=len(todo) - added, deleted=len(stale),
                        unchanged=len(entries) - len(todo), rebuilt=rebuilt,
                        seconds=time.perf_counter() - started)
    if todo or stale:
        log.info("glossary index synced: %s", report.as_dict())
    return collection, report


class _Lease:
    """This process's claim to write a shared (server) collection: ``<collection>.writer`` exists."""

    def __init__(self, client: Any, name: str, version: str) -> None:
        self.client, self.name, self.version = client, name, version
        self.owner = uuid.uuid4().hex
        self.beats = 0
        self.collection: Any = None

    def _metadata(self) -> dict[str, Any]:
        return {"owner": self.owner, "version": self.version, "beat": self.beats}

    def claim(self) -> bool:
        try:
            self.collection = self.client.create_collection(self.name, metadata=self._metadata(),
                                                            embedding_function=None)
            return True
        except Exception as exc:
            # lost the election: the lease exists, or existed when we asked and its writer has released it
            # since (the next round of the caller's loop runs the election again)
            if _get(self.client, self.name) is not None or "already exists" in str(exc):
                return False
            raise IndexStoreError(f"cannot create the Chroma collection {self.name!r}: {exc}") from None

    def beat(self) -> None:
        self.beats += 1
        try:
            self.collection.modify(metadata=self._metadata())
        except Exception as exc:  # taken over after a long pause: the writes stay idempotent, carry on
            log.warning("the index writer lease %s was lost (%s); finishing anyway", self.name, exc)

    def release(self) -> None:
        with contextlib.suppress(Exception):
            current = _get(self.client, self.name)
            if current is not None and (current.metadata or {}).get("owner") == self.owner:
                self.client.delete_collection(self.name)


def sync_shared(client: Any, collection_name: str, entries: list[GlossaryEntry], embedder: Embedder,
                rebuild: bool = False, wait_s: float = WAIT_S,
                stale_s: float = LEASE_STALE_S) -> tuple[Any, SyncReport]:
    """`sync_index` for a collection shared by several processes: the elected writer syncs, the others
    wait for its stamp and read (see the module docstring)."""
    started = time.perf_counter()
    version = index_version(entries, embedder)
    lease_name = collection_name + LEASE_SUFFIX
    deadline = time.monotonic() + wait_s
    waited = False
    seen_beat: Any = None
    seen_at = time.monotonic()
    while True:
        if not rebuild:
            current = _get(client, collection_name)
            if current is not None and _stamp(current) == version:
                return current, SyncReport(total=len(entries), added=0, updated=0, deleted=0,
                                           unchanged=len(entries), rebuilt=False,
                                           seconds=time.perf_counter() - started, waited=waited)
        lease = _Lease(client, lease_name, version)
        if lease.claim():
            try:
                collection, report = sync_index(client, collection_name, entries, embedder, rebuild,
                                                beat=lease.beat)
            finally:
                lease.release()
            return collection, _waited(report, waited)
        if not waited:
            log.info("another process is writing the glossary index %s; waiting for it", collection_name)
            waited = True
        holder = _get(client, lease_name)
        # a new lease (another id) counts as a beat too
        beat = (None, None) if holder is None else ((holder.metadata or {}).get("beat"), holder.id)
        now = time.monotonic()
        if beat != seen_beat:
            seen_beat, seen_at = beat, now
        elif holder is not None and now - seen_at > stale_s:
            log.warning("the index writer %s has not beaten for %.0f s; taking over", lease_name, now - seen_at)
            with contextlib.suppress(Exception):
                client.delete_collection(lease_name)
            continue
        if now > deadline:
            raise IndexStoreError(f"another process has been writing the Chroma collection {collection_name!r} "
                                  f"for over {wait_s:.0f} s (lease {lease_name!r}); is an ingest stuck?")
        time.sleep(POLL_S)


def load_vectors(collection: Any, entries: list[GlossaryEntry]) -> np.ndarray:
    """The stored vectors, in glossary order, as a normalised matrix for in-process search."""
    stored = collection.get(ids=[e.id for e in entries], include=["embeddings"])
    by_id = dict(zip(stored["ids"], stored["embeddings"], strict=True))
    missing = [e.id for e in entries if e.id not in by_id]
    if missing:
        raise IndexStoreError(f"the Chroma collection lacks {len(missing)} glossary entries (e.g. {missing[0]!r}); "
                              "run `anchorgpu ingest`")
    matrix = np.asarray([by_id[e.id] for e in entries], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)
