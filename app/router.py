"""What the words of a message ask, by nearest neighbours in a labelled bank of customer utterances.

The bank (``data/routes.yaml``, its one reader is :func:`load_bank`) holds a few hundred utterances per
route, in Russian and English, written as customers write. A message is embedded with the multilingual-e5
embedder the retriever already loads (the same vector then serves retrieval: one embedding per message),
and each route is scored by the mean cosine similarity of its ``k`` nearest utterances. The route with the
best score wins; ``margin`` is its lead over the runner-up, and a caller treats a small margin as "not
sure" (it asks rather than guesses).

Why k-nearest-neighbours over a bank, as semantic-router libraries do (semantic-router's route layer,
NeMo Guardrails' canonical forms), and not a trained classifier: the bank is data an operator can read and
extend, a new phrasing is one line, and there is nothing to train. The mean of the k best rather than the
single best keeps one odd utterance from deciding; routes with many utterances are not favoured, since
only the k best count.

Vectors of the bank are cached on disk next to the index, keyed by the bank's text and the embedder's
identity, so a start does not re-embed a thousand utterances.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from infra.yamlfile import YamlDocument, read_yaml, validate

log = logging.getLogger(__name__)

ROUTES = ("fit", "quote", "price", "compare", "spec", "rule", "lifecycle", "greeting", "thanks", "help",
          "complaint", "glossary", "off_topic")
BANK_FILE = "routes.yaml"
NEIGHBOURS = 3


class BankError(ValueError):
    """The bank file is missing or malformed; the message names the file, the line and the field."""


def _utterances(utterances: list[str]) -> list[str]:
    if not utterances:
        raise ValueError("the route has no utterances")
    blank = [index for index, text in enumerate(utterances) if not str(text).strip()]
    if blank:
        raise ValueError(f"utterance #{blank[0] + 1} is empty")
    return utterances


class RouteBank(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    routes: dict[str, Annotated[list[str], AfterValidator(_utterances)]] = Field(default_factory=dict)

    @field_validator("routes")
    @classmethod
    def _known_routes(cls, routes: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(routes) - set(ROUTES))
        if unknown:
            raise ValueError(f"unknown routes {unknown}; known: {', '.join(ROUTES)}")
        return routes

    def labelled(self) -> tuple[list[str], list[str]]:
        texts, labels = [], []
        for route, utterances in self.routes.items():
            for text in utterances:
                texts.append(str(text).strip())
                labels.append(route)
        return texts, labels

    def digest(self) -> str:
        texts, labels = self.labelled()
        joined = "\n".join(f"{label}\t{text}" for label, text in zip(labels, texts, strict=True))
        return hashlib.sha256(joined.encode()).hexdigest()[:16]


def load_bank(path: Path) -> RouteBank:
    """The bank; a malformed file raises :class:`BankError` naming the file, the line and the field."""
    try:
        document = read_yaml(path, BankError)
    except OSError as exc:
        raise BankError(f"{path}: {exc}") from None
    if document.data is None:  # an empty bank: no routes
        document = YamlDocument(document.source, {}, document.root)
    return validate(RouteBank, document, BankError)


@dataclass(frozen=True)
class RouteScores:
    """Each route's score (mean similarity of its nearest utterances), best first."""

    ranked: tuple[tuple[str, float], ...]
    nearest: str  # the bank utterance closest to the message (for --json and debugging)

    @property
    def route(self) -> str:
        return self.ranked[0][0]

    @property
    def score(self) -> float:
        return self.ranked[0][1]

    @property
    def margin(self) -> float:
        return self.ranked[0][1] - self.ranked[1][1] if len(self.ranked) > 1 else self.ranked[0][1]

    def of(self, route: str) -> float:
        return next((score for name, score in self.ranked if name == route), 0.0)

    def lead(self, route: str, kin: tuple[str, ...] = ()) -> float:
        """How far ``route`` is ahead of the best other route (negative when behind); routes in ``kin`` are
        not rivals (a complaint close to "who are you" is small talk either way)."""
        best_other = max((score for name, score in self.ranked if name != route and name not in kin), default=0.0)
        return self.of(route) - best_other


Encoder = Callable[[Sequence[str]], np.ndarray]


class SemanticRouter:
    def __init__(self, bank: RouteBank, vectors: np.ndarray, neighbours: int = NEIGHBOURS) -> None:
        texts, labels = bank.labelled()
        if len(texts) != len(vectors):
            raise BankError(f"{len(texts)} utterances but {len(vectors)} vectors")
        self.texts = texts
        self.labels = np.array(labels)
        self.routes = tuple(route for route in ROUTES if route in bank.routes)
        self.vectors = _normalised(vectors)
        self.neighbours = neighbours
        self._members = {route: np.flatnonzero(self.labels == route) for route in self.routes}

    @classmethod
    def build(cls, bank: RouteBank, encode: Encoder, identity: str, cache_dir: Path | None) -> SemanticRouter:
        """Embed the bank (or load its vectors from ``cache_dir``)."""
        texts, _ = bank.labelled()
        cache = cache_dir / f"routes-{bank.digest()}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}.npy" \
            if cache_dir is not None else None
        vectors: np.ndarray | None = None
        if cache is not None and cache.exists():
            try:
                vectors = np.load(cache)
            except (OSError, ValueError):
                vectors = None
            if vectors is not None and vectors.shape[0] != len(texts):
                vectors = None
        if vectors is None:
            vectors = np.asarray(encode(texts), dtype=np.float32)
            if cache is not None:
                try:
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    temporary = cache.with_name(f"{cache.stem}.{os.getpid()}.tmp.npy")  # concurrent starts
                    np.save(temporary, vectors)
                    temporary.replace(cache)
                except OSError as exc:  # a read-only disk only costs the next start the embedding
                    log.warning("route vectors not cached: %s", exc)
        return cls(bank, vectors)

    def score(self, vector: np.ndarray) -> RouteScores:
        query = _normalised(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
        similarity = self.vectors @ query
        scores: list[tuple[str, float]] = []
        for route, members in self._members.items():
            values = similarity[members]
            k = min(self.neighbours, len(values))
            best = np.partition(values, len(values) - k)[len(values) - k:]
            scores.append((route, float(best.mean())))
        scores.sort(key=lambda item: item[1], reverse=True)
        return RouteScores(tuple(scores), self.texts[int(np.argmax(similarity))])


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
