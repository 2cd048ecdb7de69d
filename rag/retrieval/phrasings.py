"""How customers ask about each concept: curated phrasings that retrieval matches a question against.

A definition says what a thing is; a customer describes what hurts ("на backward вылетает out of memory,
можно не хранить активации?") and rarely names the concept. ``data/glossary/phrasings.yaml`` keeps, per
concept, a few questions and problem statements in Russian and English whose answer is that concept's
definition, written by the maintainers (never shown, never quoted: they only steer retrieval). Each one is
embedded as a query, since a question is compared with a question here; an entry's dense score is the
better of its own vectors and its concept's best phrasing, less :data:`PHRASING_MARGIN`.

The vectors are computed once per (embedder, phrasings, glossary) and kept in memory and in the machine's vector
cache (``anchorgpu-phrasings-<version>.npz``), as the English vectors are (:mod:`rag.retrieval.english`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

from infra.settings import RAGSettings
from infra.yamlfile import read_yaml, validate
from rag.glossary import GlossaryEntry
from rag.retrieval.dense import Embedder
from rag.retrieval.kept import read_kept, write_kept

log = logging.getLogger(__name__)

PHRASINGS_FILE = Path("glossary") / "phrasings.yaml"
PREFIX = "anchorgpu-phrasings-"
# A question matched against a question scores higher in e5 than against a definition whatever it says, so
# a phrasing's similarity counts this much less than the entry's own text. Chosen with `anchorgpu bench
# answers` on the labelled sets (see docs/retrieval.md): lower lets out-of-scope questions past the gate.
PHRASING_MARGIN = 0.02
MAX_PHRASING_CHARS = 300
_MEMO: dict[str, PhrasingVectors] = {}
_LOCK = threading.Lock()


class PhrasingsError(ValueError):
    """The phrasings file is malformed; the message names the file, the line and the concept."""


class PhrasingsDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phrasings: dict[str, list[str]]

    @field_validator("phrasings")
    @classmethod
    def _filled(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for concept, texts in value.items():
            if not texts:
                raise ValueError(f"{concept}: no phrasings")
            for text in texts:
                if not text.strip() or len(text) > MAX_PHRASING_CHARS:
                    raise ValueError(f"{concept}: a phrasing must be 1-{MAX_PHRASING_CHARS} characters: {text!r}")
        return {concept: [" ".join(t.split()) for t in texts] for concept, texts in value.items()}


def load_phrasings(path: Path) -> dict[str, list[str]]:
    """Concept -> its phrasings; raises :class:`PhrasingsError` on a malformed file, FileNotFoundError on none."""
    return validate(PhrasingsDocument, read_yaml(path, PhrasingsError), PhrasingsError).phrasings


def unknown_concepts(phrasings: Mapping[str, Sequence[str]], entries: Sequence[GlossaryEntry]) -> list[str]:
    """Concepts of the phrasings file that no entry has (a renamed or removed concept: its phrasings are dead)."""
    known = {entry.concept for entry in entries}
    return sorted(concept for concept in phrasings if concept not in known)


def current_phrasings(data_dir: Path) -> dict[str, list[str]]:
    """The served phrasings (none when the file is missing or malformed: retrieval then works without them)."""
    try:
        return load_phrasings(data_dir / PHRASINGS_FILE)
    except FileNotFoundError:
        return {}
    except PhrasingsError as exc:
        log.warning("phrasings off: %s", exc)
        return {}


@dataclass(frozen=True)
class PhrasingVectors:
    """One row per (entry, phrasing of its concept); ``owners[row]`` is the entry's position in the glossary."""

    matrix: np.ndarray
    owners: np.ndarray

    def best_per_entry(self, vector: np.ndarray, count: int) -> np.ndarray:
        """Each entry's best phrasing similarity to the query vector (-1 for an entry with none)."""
        best = np.full(count, -1.0, dtype=np.float32)
        np.maximum.at(best, self.owners, self.matrix @ vector)
        return best


def served_phrasings(entries: Sequence[GlossaryEntry], embedder: Embedder, rag: RAGSettings, data_dir: Path,
                     ) -> PhrasingVectors | None:
    """The phrasing vectors a served index uses, kept in the machine's vector cache."""
    return phrasing_vectors(entries, current_phrasings(data_dir), embedder,
                            rag.vector_cache_dir)


def phrasing_vectors(entries: Sequence[GlossaryEntry], phrasings: Mapping[str, Sequence[str]], embedder: Embedder,
                     folder: Path | None = None) -> PhrasingVectors | None:
    owners, texts = _rows(entries, phrasings)
    if not texts:
        return None
    payload = json.dumps([embedder.identity, owners, texts], ensure_ascii=False)
    version = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]
    with _LOCK:
        cached = _MEMO.get(version)
    if cached is None:
        matrix = read_kept(folder / f"{PREFIX}{version}.npz", len(texts)) if folder is not None else None
        if matrix is None:
            matrix = _encode(texts, embedder)
            if folder is not None:
                write_kept(folder, PREFIX, version, matrix)
        cached = PhrasingVectors(matrix, np.asarray(owners, dtype=np.int64))
    with _LOCK:
        _MEMO[version] = cached
    return cached


def _rows(entries: Sequence[GlossaryEntry], phrasings: Mapping[str, Sequence[str]]) -> tuple[list[int], list[str]]:
    owners: list[int] = []
    texts: list[str] = []
    for position, entry in enumerate(entries):
        for text in phrasings.get(entry.concept, ()):
            owners.append(position)
            texts.append(text)
    return owners, texts


def _encode(texts: Sequence[str], embedder: Embedder) -> np.ndarray:
    unique = list(dict.fromkeys(texts))  # a concept of several entries repeats its phrasings
    encoded = embedder.encode_queries(unique)
    row = {text: n for n, text in enumerate(unique)}
    return np.asarray(encoded[[row[t] for t in texts]], dtype=np.float32)

