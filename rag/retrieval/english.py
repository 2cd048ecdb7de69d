"""The glossary in English too: one more vector per entry, of its curated English rendering.

The glossary is Russian; an English question embeds against Russian text at a lower similarity than a
Russian one (e5-small: median 0.86 against 0.89 on the labelled sets, and a paraphrase such as "what's
eating the vram?" under the gate's dense threshold). Each entry whose rendering was made from its current
text (:mod:`rag.verification.renderings`) gets a second vector, "term: English"; an entry's dense score is
the better of its two. Entries without a current rendering score by their Russian vector alone.

The vectors are computed once per (embedder, renderings) and kept in memory and in the machine's vector cache
(``anchorgpu-english-<version>.npz``, :mod:`rag.retrieval.kept`), so any start with the same glossary reads one file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from infra.settings import RAGSettings
from rag.glossary import GlossaryEntry
from rag.retrieval.dense import Embedder
from rag.retrieval.kept import read_kept, write_kept
from rag.verification.renderings import RENDERINGS_FILE, RenderingsError, load_renderings, source_sha

log = logging.getLogger(__name__)

PREFIX = "anchorgpu-english-"
# Two English sentences score higher in e5 than a Russian and an English one whatever they say ("what is the
# speed of light?" reached 0.857 against an English rendering, over the gate's 0.84): an English vector's
# similarity counts 0.02 less. Chosen with `anchorgpu bench retrieval` and the two faithfulness sets: at
# 0.02 no out-of-scope question of them passes that did not before, and in-scope refusals fall 37 -> 17.
ENGLISH_MARGIN = 0.02
_MEMO: dict[str, np.ndarray] = {}  # version -> vectors: tests and reloads build many retrievers per process
_LOCK = threading.Lock()


def current_english(entries: Sequence[GlossaryEntry], data_dir: Path) -> dict[str, str]:
    """Entry id -> the English passage of each entry whose rendering was made from its current text (none
    when the renderings file is missing or malformed: retrieval then works on the Russian alone)."""
    try:
        renderings = load_renderings(data_dir / RENDERINGS_FILE)
    except RenderingsError as exc:
        log.warning("English retrieval off: %s", exc)
        return {}
    return {entry.id: f"{entry.term}: {rendering.en}" for entry in entries
            if (rendering := renderings.get(entry.id)) is not None
            and rendering.source_sha == source_sha(entry.definition)}


def served_english(entries: Sequence[GlossaryEntry], embedder: Embedder, rag: RAGSettings, data_dir: Path,
                   ) -> np.ndarray | None:
    """The English vectors a served index uses, kept in the machine's vector cache."""
    return english_vectors(entries, current_english(entries, data_dir), embedder,
                           rag.vector_cache_dir)


def english_version(entries: Sequence[GlossaryEntry], english: Mapping[str, str], embedder: Embedder) -> str:
    payload = json.dumps([embedder.identity, [(e.id, english.get(e.id)) for e in entries]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


def english_vectors(entries: Sequence[GlossaryEntry], english: Mapping[str, str], embedder: Embedder,
                    folder: Path | None = None) -> np.ndarray | None:
    """One row per entry, in glossary order: its English passage's vector, zeros where it has none (a zero
    row never beats the entry's Russian one). None when no entry has English."""
    if not any(entry.id in english for entry in entries):
        return None
    version = english_version(entries, english, embedder)
    with _LOCK:
        cached = _MEMO.get(version)
    if cached is None and folder is not None:
        cached = read_kept(folder / f"{PREFIX}{version}.npz", len(entries))
    if cached is None:
        cached = _encode(entries, english, embedder)
        if folder is not None:
            write_kept(folder, PREFIX, version, cached)
    with _LOCK:
        _MEMO[version] = cached
    return cached


def _encode(entries: Sequence[GlossaryEntry], english: Mapping[str, str], embedder: Embedder) -> np.ndarray:
    rows = [n for n, entry in enumerate(entries) if entry.id in english]
    encoded = embedder.encode_passages([english[entries[n].id] for n in rows])
    matrix = np.zeros((len(entries), encoded.shape[1]), dtype=np.float32)
    matrix[rows] = encoded
    return matrix

