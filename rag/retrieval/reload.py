"""Glossary updates without a restart: a running process follows ``entries.yaml`` and the index.

Every `interval_s` the reloader asks one cheap question: did ``entries.yaml`` change (one ``stat()``
through its :class:`~infra.datafile.DataFile` owner) into a glossary with another index version? If so
it brings the index in line the usual way (:func:`rag.retrieval.index.open_index`): one writer at a time, and the
index version stamped on the collection means that when `anchorgpu ingest` or another replica has already
embedded the new entries, this process only reads their vectors (a writer still busy is waited for).
It then builds the new BM25, name and vector indexes beside the old ones and swaps them into the live
retriever in one reference assignment. Questions keep being answered from the old glossary until the new
one is complete; an edit that does not parse, or an index that cannot be synced, leaves the old one
serving (the sync is retried at the next poll).

Replicas follow the file they read, so they must share one glossary (one image or one volume); the
index is shared through its store and never decides which glossary is current.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from infra.datafile import DataFile
from infra.settings import RAGSettings
from rag.glossary import Glossary, GlossaryEntry
from rag.retrieval.english import served_english
from rag.retrieval.index import index_version, open_index
from rag.retrieval.phrasings import served_phrasings
from rag.retrieval.retriever import BRUTE_FORCE_MAX, GlossaryIndex, HybridRetriever

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reload:
    entries: int
    version: str
    seconds: float


class GlossaryReloader:
    def __init__(self, rag: RAGSettings, glossary: DataFile[Glossary], retriever: HybridRetriever,
                 interval_s: float, data_dir: Path | None = None) -> None:
        self.rag = rag
        self.data_dir = data_dir  # where the curated English renderings are (None: Russian vectors only)
        self.glossary = glossary
        self.retriever = retriever
        self.interval_s = interval_s
        self._file_version = glossary.version  # what the retriever was built from

    def _version(self, entries: list[GlossaryEntry]) -> str:
        embedder = self.retriever.embedder
        return index_version(entries, embedder) if embedder is not None else ""

    def check(self) -> Reload | None:
        """One poll (blocking: run it in a worker thread). Returns what was reloaded, if anything."""
        started = time.perf_counter()
        entries = self.glossary.get()  # an edit that does not parse keeps the last good version
        if self.glossary.version == self._file_version:
            return None
        if entries == self.retriever.entries:  # saved again without a change
            self._file_version = self.glossary.version
            return None
        version = self._version(entries)
        embedder = self.retriever.embedder
        if embedder is None:
            index = GlossaryIndex.build(entries, None)
        else:
            opened = open_index(self.rag, entries, embedder, with_vectors=len(entries) <= BRUTE_FORCE_MAX)
            english = (served_english(entries, embedder, self.rag, self.data_dir)
                       if self.data_dir is not None and opened.vectors is not None else None)
            phrasings = (served_phrasings(entries, embedder, self.rag, self.data_dir)
                         if self.data_dir is not None and opened.vectors is not None else None)
            index = GlossaryIndex.build(entries, opened.vectors, opened.collection, opened.report, english,
                                        phrasings)
        self.retriever.replace_index(index)
        self._file_version = self.glossary.version
        reload = Reload(len(entries), version, time.perf_counter() - started)
        log.info("glossary reloaded: %d entries, version %s, %.2f s", len(entries), version or "-", reload.seconds)
        return reload

    async def run_forever(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await asyncio.to_thread(self.check)
            except Exception:  # the old glossary keeps serving; the next poll tries again
                log.exception("the glossary could not be reloaded; the previous one keeps serving")
