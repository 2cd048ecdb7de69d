"""Lexical retrieval: BM25 over lemmas/stems (bm25s) and headword/alias matching (exact + rapidfuzz)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import bm25s
import numpy as np
from rapidfuzz import fuzz, process

from rag.text import STOPWORDS, compact, content_lemmas, lemma, words

MAX_NGRAM = 6  # the longest alias ("кэш ключей и значений") is five words
FUZZY_MIN_CHARS = 4  # shorter n-grams only match exactly: fuzzy "ssh" would hit "sft"
FUZZY_CUTOFF = 84.0  # rapidfuzz ratio; one typo in a 7-letter word ≈ 86
ONE_SIDE = 0.5  # what a comparison entry named by one of its sides only keeps of its name score
_CYRILLIC = re.compile(r"[а-я]")


@dataclass(frozen=True)
class Ranked:
    """One method's ranking: entry positions best first, their raw scores, and gate evidence."""

    order: list[int]
    scores: list[float]
    evidence: float  # how strongly the best match supports "this question is about the glossary" (0..1)
    spans: list[frozenset[int]] = field(default_factory=list)  # names only: the question words each matched
    # dense only: the best similarity of the question to a phrasing (rag.retrieval.phrasings), its own evidence
    phrasing: float = 0.0


class Bm25Index:
    """BM25 (bm25s, Lucene variant) over content lemmas of each entry's names and definition."""

    def __init__(self, passages: Sequence[str]) -> None:
        corpus = [content_lemmas(p) or ["∅"] for p in passages]
        self._vocab: dict[str, int] = {}
        for doc in corpus:
            for token in doc:
                self._vocab.setdefault(token, len(self._vocab))
        ids = [[self._vocab[t] for t in doc] for doc in corpus]
        self._doc_tokens = [set(doc) for doc in corpus]
        self._retriever = bm25s.BM25()
        self._retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=self._vocab), show_progress=False)
        df = Counter(t for doc in self._doc_tokens for t in doc)
        n = len(corpus)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._unknown_idf = math.log(1 + (n + 0.5) / 0.5)
        self.size = n

    def search(self, query: str, k: int) -> Ranked:
        tokens = content_lemmas(query)
        known = [t for t in tokens if t in self._vocab]
        if not known:
            return Ranked([], [], 0.0)
        k = min(k, self.size)
        query_ids = [[self._vocab[t] for t in known]]
        docs, scores = self._retriever.retrieve(query_ids, k=k, show_progress=False, n_threads=1)
        order = [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        raw = [float(s) for s in scores[0][: len(order)]]
        return Ranked(order, raw, self._coverage(tokens, order[0]) if order else 0.0)

    def _coverage(self, tokens: list[str], best: int) -> float:
        """IDF-weighted share of the question's content words found in the best entry.

        Words unknown to the glossary weigh the most, so "capital of Australia" scores 0 while a
        paraphrase of a definition scores high.
        """
        total = matched = 0.0
        for token in set(tokens):
            weight = self._idf.get(token, self._unknown_idf)
            total += weight
            if token in self._doc_tokens[best]:
                matched += weight
        return matched / total if total else 0.0


class NameIndex:
    """Headwords and aliases: exact n-gram lookup (surface and lemma keys) plus fuzzy lookup for typos.

    An entry scores by how much of the question's content its matched names cover (each question word
    counted once, at the best quality that matched it), so "KV cache" in "what is a KV cache" beats
    "cache" in a longer unrelated question, and "GGML и GGUF" beats "GGUF" when both names are asked.
    Match quality: exact spelling 1.0, same lemmas/stems 0.85, a part of a compound entry ("GGUF" in
    "GGML и GGUF") 0.8, a typo 0.9 × similarity. A compound entry named by one of its parts only counts
    ``ONE_SIDE``: the parts are there so that asking about both sides finds the comparison, and "what is
    DreamBooth" asks about DreamBooth, not about "LoRA и DreamBooth".
    """

    def __init__(self, names_per_entry: Sequence[Sequence[str]],
                 parts_per_entry: Sequence[Sequence[str]] | None = None,
                 known_words: set[str] | None = None) -> None:
        self._surface: dict[str, dict[int, float]] = defaultdict(dict)  # "kvкэш" → {entry: quality}
        self._lemma: dict[str, dict[int, float]] = defaultdict(dict)  # "кэш ключ и значение" → …
        self._part_of: dict[str, dict[int, int]] = defaultdict(dict)  # a part's key → {compound: part number}
        self._named_parts: dict[int, set[int]] = {}
        parts = parts_per_entry or [() for _ in names_per_entry]
        for position, (names, entry_parts) in enumerate(zip(names_per_entry, parts, strict=True)):
            own = {compact("".join(words(name))) for name in names}
            # a part that is also the entry's own name ("RAG", an alias of "RAG и fine-tuning") names it
            self._named_parts[position] = {number for number, part in enumerate(entry_parts)
                                           if compact("".join(words(part))) in own}
            for quality, group in ((1.0, names), (0.8, entry_parts)):
                for number, name in enumerate(group):
                    name_words = words(name)
                    if not name_words:
                        continue
                    surface_key, lemma_key = compact("".join(name_words)), self._lemma_key(name_words)
                    surface = self._surface[surface_key]
                    surface[position] = max(surface.get(position, 0.0), quality)
                    lemmas = self._lemma[lemma_key]
                    lemmas[position] = max(lemmas.get(position, 0.0), quality * 0.85)
                    if quality < 1.0:
                        self._part_of[surface_key][position] = self._part_of[lemma_key][position] = number
        # Typo candidates bucketed by (length, first letter) and (length, second letter): fuzz.ratio ≥ 84
        # needs lengths within ×0.72..×1.38, and a typo rarely hits both of the first two letters, so a
        # lookup scans ~1% of the names instead of all of them (what keeps 100k entries fast).
        self._fuzzy: dict[tuple[int, str], list[str]] = defaultdict(list)
        for key in self._surface:
            if len(key) >= FUZZY_MIN_CHARS:
                self._fuzzy[(len(key), key[0])].append(key)
                if key[1] != key[0]:
                    self._fuzzy[(len(key), key[1])].append(key)
        # words spelled correctly somewhere in the glossary (names and definitions) need no typo lookup
        self._known_words = {w for names in names_per_entry for name in names for w in words(name)}
        self._known_words |= known_words or set()
        self.size = len(names_per_entry)

    @staticmethod
    def _lemma_key(name_words: list[str]) -> str:
        return " ".join(lemma(w) for w in name_words)

    def search(self, query: str, k: int, fuzzy: bool = True) -> Ranked:
        query_words = words(query)
        weights = [0 if w in STOPWORDS else len(w) for w in query_words]
        content_chars = sum(weights) or 1
        covered: dict[int, dict[int, float]] = defaultdict(dict)  # entry → {word position: quality}
        sides: dict[int, set[int]] = defaultdict(set)  # compound entry → the parts of it the question names
        unmatched: list[tuple[str, range]] = []
        for n in range(min(MAX_NGRAM, len(query_words)), 0, -1):
            for start in range(len(query_words) - n + 1):
                span = range(start, start + n)
                if not any(weights[i] for i in span):
                    continue
                gram = query_words[start:start + n]
                key = compact("".join(gram))
                found = False
                # English stems conflate derivations ("tokenizer" → "token"), Russian lemmas only
                # undo inflection: a lemma-only match of a Latin n-gram is weaker evidence
                lemma_factor = 1.0 if _CYRILLIC.search(key) else 0.7
                for table, lookup, factor in ((self._surface, key, 1.0),
                                              (self._lemma, self._lemma_key(gram), lemma_factor)):
                    for position, quality in table.get(lookup, {}).items():
                        self._cover(covered[position], span, quality * factor)
                        found = True
                    for position, number in self._part_of.get(lookup, {}).items():
                        sides[position].add(number)
                # typo lookup only where a word is unknown to every name: known words need none, and
                # the lookup is the one part whose cost grows with the glossary
                if (not found and fuzzy and n <= 2 and len(key) >= FUZZY_MIN_CHARS
                        and any(weights[i] and query_words[i] not in self._known_words for i in span)):
                    unmatched.append((key, span))
        for key, span in unmatched:
            for match, ratio, _ in process.extract(key, self._fuzzy_candidates(key), scorer=fuzz.ratio,
                                                   score_cutoff=FUZZY_CUTOFF, limit=3):
                for position, quality in self._surface[match].items():
                    self._cover(covered[position], span, 0.9 * quality * ratio / 100.0)
                for position, number in self._part_of.get(match, {}).items():
                    sides[position].add(number)
        scored = []
        for position, per_word in covered.items():
            score = sum(q * weights[i] for i, q in per_word.items()) / content_chars
            named = sides.get(position, set())
            if len(named) == 1 and not named <= self._named_parts[position]:
                score *= ONE_SIDE
            best_quality = max(per_word.values())
            scored.append((position, score, best_quality))
        scored.sort(key=lambda item: (-item[1], item[0]))
        scored = scored[:k]
        evidence = 0.0
        if scored:
            # for the gate a sure name counts even inside a long question: half weight on coverage
            evidence = scored[0][2] * 0.5 + scored[0][1] * 0.5
        return Ranked([p for p, _, _ in scored], [s for _, s, _ in scored], evidence,
                      [frozenset(covered[p]) for p, _, _ in scored])

    def _fuzzy_candidates(self, key: str) -> list[str]:
        low, high = math.ceil(len(key) * 0.72), math.floor(len(key) * 1.39)
        candidates: list[str] = []
        for length in range(low, high + 1):
            for letter in {key[0], key[1]}:
                candidates.extend(self._fuzzy.get((length, letter), ()))
        return candidates

    @staticmethod
    def _cover(per_word: dict[int, float], span: range, quality: float) -> None:
        for i in span:
            if quality > per_word.get(i, 0.0):
                per_word[i] = quality


def cosines(matrix: np.ndarray, vector: np.ndarray, also: np.ndarray | None = None,
            also_margin: float = 0.0) -> np.ndarray:
    """Each row of a row-normalised matrix scored by dot product with a normalised vector; with ``also`` (a
    second matrix of the same rows), by the better of its two, ``also``'s less the margin."""
    return matrix @ vector if also is None else np.maximum(matrix @ vector, also @ vector - also_margin)


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the k highest scores, best first, and those scores."""
    k = min(k, scores.shape[0])
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top])]
    return top, scores[top]
