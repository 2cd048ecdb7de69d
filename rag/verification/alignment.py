"""A generated sentence aligned with one source sentence: every claim it makes must be that sentence's.

Rules added one per wrong sentence seen let the next phrasing through; a small model inverts a fact in a
handful of ways (a comparative or a direction swapped, a negation added or dropped, a figure or unit
changed, a sibling concept or two terms trading places, a phrase said twice), and each of them changes
*which words* a sentence has, *how often*, *under which negation* or *in which order its terms come*. So a
sentence is checked against the one source sentence that covers most of it (of the cited entry's Russian
text or its curated English rendering), and it passes only when:

* **words** — each of its content words (lemma, or a word of the same family: «требуется»/«требует») is
  a word of that source sentence, each used at most as often as the source uses it; direction words that
  are stopwords elsewhere ("more", "less") count as content here. Only the entry's own names and a few
  copulas are free;
* **numbers** — a figure is a word like any other: it must be in the same source sentence;
* **negation** — each aligned word is negated (a «не», "not", «без», "without"… shortly before it, in its
  clause) in the sentence exactly when it is in the source;
* **roles** — each of the sentence's terms (Latin names, figures: NVIDIA, GPU, FP32) keeps the content
  words on one side of it that it has in the source, and the terms that share one of its clauses come from
  one clause of the source, in the source's order: "a platform of GPUs for programming NVIDIA" is not "a
  platform of NVIDIA for programming GPUs". Whole clauses may move; terms may not;
* **one claim, said once** — the sentence says at least two of the source's words beyond the concept's
  names (not «X — это X», not the question echoed), and a phrase as its own subject and object ("the
  proposed tokens check the proposed tokens") uses a word more often than the source does.

Two adjacent source sentences may be joined ("BM25 не является нейросетью и относится к …"), each clause
restating one of them, in their order.

What is measured is in ``anchorgpu bench verifier`` (mutants of every glossary sentence, held out by entry).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rag.text import STOPWORDS, fold, lemma

Problem = Literal["unsupported", "polarity", "swapped", "echo"]

# words whose direction or scope the claim turns on: stopwords to retrieval, content here ("not only the
# weights" is not "only the weights")
_DIRECTION = frozenset({"more", "most", "less", "least", "fewer", "better", "worse", "than", "only", "только",
                        "notonly", "нетолько", "also", "тоже", "также"})
_NEGATORS = frozenset({"не", "нет", "ни", "нельзя", "невозможно", "без", "вместо", "not", "no", "never", "cannot",
                       "without", "neither", "nor", "none", "nothing", "instead", "nt"})
_NOT_ONLY = re.compile(r"(?i)\b(не\s+только|not\s+only)\b")
NEGATION_REACH = 2  # a negator governs the next content words of its clause ("does not determine the cooling")
# copulas and frames a faithful restatement adds around the source's words
# (light verbs only: "имеет 80 ГБ", "provides up to 900 GB/s" — what they join is checked, and a negated
# one is a claim of its own)
_GLUE = frozenset({"представлять", "собой", "называть", "называемый", "refer", "call", "it", "which", "that", "nt",
                   "mean", "term", "иметь", "обладать", "обеспечивать", "provid", "offer"})
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
MIN_ALIGNED = 2  # a sentence saying fewer of its source's words than this (names aside) says nothing
# "multi-GPU" is one word ("GPU-приложений", across scripts, is two: the name and the Russian word)
_TOKEN = re.compile(r"[A-Za-z]+[A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|[^\W\d_]+[^\W_]*(?:[.+][^\W_]+)*|\d+(?:[.,]\d+)*")
_CONJUNCTION = r"(?:и|а|но|однако|and|but|while|whereas)\s"
_CLAUSE_BREAK = re.compile(rf",\s(?:{_CONJUNCTION})?|;|:\s|\s[—–-]\s|\(|\)|\s{_CONJUNCTION}")
SENTENCE_JOIN = " ¶ "  # two adjacent source sentences read as one source (the model joins them)
EDGE = ","  # what a clause's first word follows and its last word precedes
CONTEXT = 2  # content words on each side that anchor a term in its place
# two lemmas of one root ("требоваться"/"требовать", "разделить"/"разделение", "хранить"/"хранение") share a
# prefix this close to the shorter one's length; "смежный"/"несмежный", "повышать"/"понижать" do not
ROOT_SLACK = 3
MIN_ROOT = 4


def same_root(a: str, b: str) -> bool:
    """Two lemmas of one word family (see ``ROOT_SLACK``): a verb and its noun, a reflexive verb."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < MIN_ROOT:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= max(MIN_ROOT, shorter - ROOT_SLACK)


@dataclass(frozen=True)
class Token:
    key: str  # lemma, or the figure as written with a dot
    clause: int
    term: bool  # a Latin name or a figure: its place carries its role
    negations: int  # how many negators govern it
    before: tuple[str, ...]  # the content words just before it in its clause, nearest first
    after: tuple[str, ...]  # ...and just after it
    edges: tuple[str, str]  # the words written just before and after it (EDGE at the clause's edges)
    sentence: int = 0  # which sentence of a joined source (SENTENCE_JOIN) it is in


def _is_term(surface: str) -> bool:
    if any(ch.isdigit() for ch in surface):
        return True
    latin_upper = sum(1 for ch in surface if "A" <= ch <= "Z")
    return latin_upper >= 2 or (latin_upper == 1 and not surface[0].isupper())


@dataclass(frozen=True)
class Reading:
    tokens: tuple[Token, ...]
    dangling: int  # negators that govern no content word ("that is not why")


def read(text: str) -> Reading:
    """The content words of a text, each with its clause, its neighbours and the negators governing it."""
    text = _NOT_ONLY.sub(
        lambda m: "notonly" if m.group(0)[0] in "nN" else "нетолько",
        _POSSESSIVE.sub("", text.replace("n't", " nt").replace("n’t", " nt")),
    )
    result: list[Token] = []
    dangling = 0
    parts = [(sentence, part) for sentence, whole in enumerate(text.split(SENTENCE_JOIN.strip()))
             for part in _CLAUSE_BREAK.split(whole)]
    for clause, (sentence, part) in enumerate(parts):
        surfaces = _TOKEN.findall(part or "")
        written = [fold(surface) for surface in surfaces]
        found: list[tuple[str, bool, int, tuple[str, str]]] = []
        pending: list[int] = []  # for each open negator, how many content words it still governs
        after_number = False
        for index, (surface, word) in enumerate(zip(surfaces, written, strict=True)):
            if word in _NEGATORS:
                pending.append(NEGATION_REACH)
                after_number = False
                continue
            number = word[0].isdigit()
            key = word.replace(",", ".") if number else lemma(word)
            unit = after_number and not number  # "100 с" is seconds, not the preposition
            after_number = number
            if not (number or unit) and (
                (word in STOPWORDS and word not in _DIRECTION) or (key in STOPWORDS and key not in _DIRECTION)
            ):
                continue
            negations = sum(1 for left in pending if left > 0)
            pending = [left - 1 for left in pending]
            edges = (
                written[index - 1] if index > 0 else EDGE,
                written[index + 1] if index + 1 < len(written) else EDGE,
            )
            found.append((key, number or _is_term(surface), negations, edges))
        for at, (key, term, negations, edges) in enumerate(found):
            before = tuple(k for k, *_ in reversed(found[max(0, at - CONTEXT) : at]))  # nearest first
            after = tuple(k for k, *_ in found[at + 1 : at + 1 + CONTEXT])
            result.append(Token(key, clause, term, negations, before, after, edges, sentence))
        dangling += sum(1 for left in pending if left == NEGATION_REACH)
    return Reading(tuple(result), dangling)


def tokens(text: str) -> list[Token]:
    return list(read(text).tokens)


@dataclass(frozen=True)
class Alignment:
    source: str  # the source sentence the sentence was aligned with
    aligned: int  # how many of the sentence's words it found there
    problem: Problem | None


def _matches(word: str, other: str) -> bool:
    """One lemma, or one word family: Russian by :func:`same_root`; an English stem (Snowball has already
    undone the inflection) only as a prefix of the other ("trainabl"/"train", not "modern"/"model")."""
    if word == other:
        return True
    if word[0].isdigit() or other[0].isdigit():
        return False
    if word.isascii() and other.isascii():
        shorter, longer = sorted((word, other), key=len)
        return len(shorter) >= MIN_ROOT + 1 and longer.startswith(shorter)
    return same_root(word, other)


def _align_one(
    said: Sequence[Token],
    source: Sequence[Token],
    free: frozenset[str] | set[str],
) -> tuple[list[tuple[Token, Token]], list[Token]]:
    """Each word of the sentence paired with an unused source word of the same lemma or family; a free word
    (the concept's name) the source does not say is let through, and one it says is aligned like the rest,
    so that its place is checked too."""
    used: set[int] = set()
    pairs: list[tuple[Token, Token]] = []
    missing: list[Token] = []
    for token in said:
        candidates = [i for i, other in enumerate(source) if i not in used and _matches(token.key, other.key)]
        exact = [i for i in candidates if source[i].key == token.key]
        chosen = (exact or candidates)[:1]
        if chosen:
            used.add(chosen[0])
            pairs.append((token, source[chosen[0]]))
        elif token.key not in free:
            missing.append(token)
    return pairs, missing


def _roles_kept(pairs: Sequence[tuple[Token, Token]], source: Sequence[Token], names: set[str]) -> bool:
    """Each term keeps a neighbour it has in the source (the word before it or after it), and the terms of
    one clause of the sentence come from one clause of the source, in its order: "a platform of GPUs for
    programming NVIDIA" is not "a platform of NVIDIA for programming GPUs"."""
    for token, _ in pairs:
        # the concept's own Latin name is placed like a term ("…, the standard for LLM brain" moves "Brain
        # Float"); a Russian name's words are common ones («месяц», «аренда»)
        placed = token.term or (token.key in names and token.key.isascii())
        if placed and not any(other.key == token.key and _anchored(token, other) for other in source):
            return False
    # joined sentences: each clause of the sentence restates one of them, in their order
    sentence_of: dict[int, set[int]] = {}
    for token, origin in pairs:
        sentence_of.setdefault(token.clause, set()).add(origin.sentence)
    if any(len(sentences) > 1 for sentences in sentence_of.values()):
        return False
    order = [min(sentence_of[clause]) for clause in sorted(sentence_of)]
    if order != sorted(order):
        return False
    by_clause: dict[int, list[Token]] = {}
    for token, _ in pairs:
        if token.term:
            by_clause.setdefault(token.clause, []).append(token)
    for terms in by_clause.values():
        if len(terms) < 2:
            continue
        clauses = [{s.clause for s in source if s.key == t.key} for t in terms]
        shared = set.intersection(*clauses)
        if not any(_in_order(terms, [s for s in source if s.clause == clause]) for clause in shared):
            return False
    return True


def _same_side(said: tuple[str, ...], source: tuple[str, ...]) -> bool:
    """The content words on one side of a term, nearest first, agree: the nearest, and the next where both
    have one."""
    return (
        bool(said)
        and bool(source)
        and said[0] == source[0]
        and (len(said) < 2 or len(source) < 2 or said[1] == source[1])
    )


def _anchored(token: Token, origin: Token) -> bool:
    """A term keeps the content words on one side of it that it has in the source; a term alone in its
    clause ("…, ECC, …") keeps the words written around it."""
    if _same_side(token.before, origin.before) or _same_side(token.after, origin.after):
        return True
    alone = not (token.before or token.after or origin.before or origin.after)
    return alone and token.edges == origin.edges


def _in_order(terms: Sequence[Token], clause: Sequence[Token]) -> bool:
    """The terms occur in the clause as a subsequence (earliest match first, which finds one if any exists)."""
    at = 0
    for term in terms:
        while at < len(clause) and clause[at].key != term.key:
            at += 1
        if at == len(clause):
            return False
        at += 1
    return True


def _says(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def _without(text: str, names: Sequence[str], unsaid: Sequence[str]) -> str:
    """The sentence without the name it opens with (its subject: "CUDA — …", "CUDA is …") and without the
    names its source does not say."""
    for name in names:
        opening = re.match(
            rf"\s*{re.escape(name)}(?!\w)(?=\s*(?:[—–:(-]|is\b|are\b|refers\b|means\b|это\b|является\b|"
            r"представляет\b|называ))",
            text,
            re.IGNORECASE,
        )
        if opening:
            text = ", " + text[opening.end() :]
            break
    for name in unsaid:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", ", ", text, flags=re.IGNORECASE)
    return text


def align(sentence: str, sources: Iterable[str], free: Iterable[str] = ()) -> Alignment:
    """``sentence`` against the source sentence covering most of it; ``free``: the cited concept's names,
    which a sentence may add ("CUDA — это …") though its source sentence does not say them."""
    names = sorted({name for name in free if name.strip()}, key=len, reverse=True)
    name_keys = {token.key for name in names for token in tokens(name)}
    best: tuple[tuple[int, int], str, list[tuple[Token, Token]], list[Token], Reading, Reading] | None = None
    for source_text in sources:
        source = read(source_text)
        # the concept's name is the sentence's subject ("CUDA — это …", "CUDA is …") though its source
        # sentence does not say it: a name the source does not say is set aside; one it says is aligned
        said = read(_without(sentence, names, [name for name in names if not _says(source_text, name)]))
        source_keys = {token.key for token in source.tokens}
        # a word of the concept's names that the source sentence does not say ("месяц аренды" for «месяц»)
        pairs, missing = _align_one(said.tokens, source.tokens, _GLUE | (name_keys - source_keys))
        rank = (len(pairs), -len(missing))
        if best is None or rank > best[0]:
            best = (rank, source_text, pairs, missing, source, said)
    if best is None:
        return Alignment("", 0, "unsupported")
    _, source_text, pairs, missing, source, reading = best
    aligned = len(pairs)
    paired = {id(token) for token, _ in pairs}
    if missing:
        return Alignment(source_text, aligned, "unsupported")
    if aligned < MIN_ALIGNED or all(token.key in name_keys for token, _ in pairs):
        return Alignment(source_text, aligned, "echo")
    if (
        reading.dangling > source.dangling
        or any(token.negations != origin.negations for token, origin in pairs)
        or any(token.negations for token in reading.tokens if id(token) not in paired)
    ):
        return Alignment(source_text, aligned, "polarity")
    if not _roles_kept(pairs, source.tokens, name_keys):
        return Alignment(source_text, aligned, "swapped")
    return Alignment(source_text, aligned, None)
