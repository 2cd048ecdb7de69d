"""Whether the concept retrieval found is the thing a question names.

Retrieval finds the nearest concept, and for a term the glossary does not have the nearest is often one whose
name is part of the asked one: "what is TensorRT?" finds «Tensor», «что такое gradient clipping?» finds «CLIP
Vision». Quoted as the answer, a definition of another thing reads as this thing's definition: a wrong answer.
A term written in Latin letters (most of the field's names are) is checked against the concept's names and
text; a Russian one is not (its inflections would make a mismatch of a match).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz.distance import DamerauLevenshtein

from rag.glossary import GlossaryEntry
from rag.text import compact, fold

# "what is tensorrt?", «что такое gradient clipping и зачем он нужен?»: the subject after the question's lead
_SUBJECT = re.compile(
    r"(?i)^\s*(?:(?:а|и|ну|and|so|ok|okay|then),?\s+)?(?:что\s+(?:такое|это\s+такое|это|значит|означает)"
    r"|what\s+(?:is|are|'s)|what's|define|explain\s+(?:what\s+)?|tell\s+me\s+about|meaning\s+of|definition\s+of"
    r"|расскажи(?:те)?\s+(?:о|об|про))\s+(?:an?\s+|the\s+)?(?P<subject>.+?)\s*\??\s*$")
# the term first, the question after it: «кеш кв это что», «лора — это что такое?», "kv cache what is it"
_SUBJECT_LAST = re.compile(r"(?i)^\s*(?:(?:а|и|ну|and|so|ok|okay),?\s+)?(?P<subject>[^?,.:;]+?)\s*[-—–]?\s*(?:это\s+)?"
                           r"(?:что\s+(?:такое|это(?:\s+такое)?|за\s+зверь)|что|чё|че|what\s+is\s+(?:it|that))\s*\??\s*$")
_ASKED_WORD = re.compile(r"(?i)^(а|и|ну|это|то)$|\b(что|сколько|как\w*|почему|зачем|где|когда|кто|можно|стоит"
                         r"|what|how|why|which|where|when|who)\b")
# where the subject ends: a clause, a second question ("… and do i need it?"), a circumstance
_SUBJECT_END = re.compile(r"(?i)\s*([,;:(?]|\s[-–—]\s|\s(and|и|а|или|or|for|для|in|on|at|в|на|у|при|when|когда|do|does|"
                          r"is|are|vs\.?|versus|нужен|нужна|нужно|зачем|why|how)\s).*$")
_LATIN = re.compile(r"^[a-z0-9][a-z0-9 .+_/\-]*$")
# a Russian word in Latin letters ("diarizatsiya", "kvantizatsiya"): not a Latin name, not checked here
_TRANSLIT = re.compile(r"(zh|kh|shch|ts[iy]|ch[ae])|(iya|ya|iye|yi|nost|ovka|tsya)$")
# "what is fp8 used for", "what is the l40s good for", "what is the difference between x and y": no subject
_NOT_A_SUBJECT = re.compile(r"(?i)^(difference|differences|разница|отличие)\b|\s(vs\.?|versus|или|or)\s")
# "what's the point of gradient accumulation", "the purpose of warmup": the subject is after "of"
_ASPECT = re.compile(r"(?i)^(the\s+)?(point|purpose|use|uses|benefit|benefits|idea|goal|role|meaning)\s+of\s+"
                     r"(an?\s+|the\s+)?")
_PRONOUN = re.compile(r"такое|это|оно|он|она|они|it|this|that|they|them|these|those")
_PURPOSE = re.compile(r"(?i)\s+(good|used|useful|needed|necessary|best|meant|for)\b.*$")
_TOKEN = re.compile(r"[a-z0-9]+")
SIMILAR = 0.8  # "cahce" is "cache" (one transposition), "tensorrt" is not "tensor"
# words beside a name that still ask about it ("mixed precision training", "kv cache size"); any other word
# makes another thing ("gradient clipping" is not «Gradient»)
_GENERIC = frozenset({"training", "train", "inference", "model", "models", "size", "memory", "mode", "method",
                      "technique", "format", "in", "on", "of", "for", "with", "pytorch", "gpu", "gpus", "llm",
                      "llms", "ml", "ai", "deep", "learning", "the", "a", "an", "s", "support", "usage", "use",
                      "full", "whole", "stage", "level", "version", "gen", "generation"})

# how an offering is said beside its name ("spot pricing", "spot capacity"): the offering's own entry answers it
_OFFERING = frozenset({"pricing", "price", "prices", "instance", "instances", "capacity"})


def definition_subject(question: str) -> str | None:
    """The term a definition question asks about ("tensorrt" in "what is tensorrt?"), if it says one."""
    text = " ".join(question.split())
    match = _SUBJECT.match(text)
    if match is None:
        match = _SUBJECT_LAST.match(text)
        if match is not None and (_ASKED_WORD.search(match.group("subject")) or len(match.group("subject")) < 2):
            match = None  # «а что это?», «сколько стоит это что»: no term before the question
    if match is None:
        return None
    if _NOT_A_SUBJECT.search(match.group("subject")):
        return None
    subject = _PURPOSE.sub("", _SUBJECT_END.sub("", _ASPECT.sub("", match.group("subject")))).strip(" ,.:;«»\"'?!")
    return subject if 0 < len(subject) <= 60 and len(subject.split()) <= 4 else None


def own_subject(question: str) -> str | None:
    """The term a definition question names itself («что такое rag и зачем он нужен?»: its "он" is RAG, not the
    turn before), None for a pronoun ("what is it?", «что это такое?»)."""
    subject = definition_subject(question)
    return None if subject is None or _PRONOUN.fullmatch(subject.lower()) else subject


def latin_term(text: str) -> bool:
    folded = fold(text)
    return bool(_LATIN.match(folded)) and any(ch.isalpha() for ch in text) \
        and not any(_TRANSLIT.search(word) for word in folded.split())


def _sound(word: str) -> str:
    """A word as it sounds, for the spellings of one sound ("epok" is "epoch", "konvolution" "convolution")."""
    for written, said in (("ch", "k"), ("ck", "k"), ("ph", "f"), ("c", "k"), ("y", "i")):
        word = word.replace(written, said)
    return re.sub(r"(.)\1+", r"\1", word)


def _same(a: str, b: str) -> bool:
    if a == b or (min(len(a), len(b)) >= 4 and _sound(a) == _sound(b)):
        return True
    if min(len(a), len(b)) >= 4 and DamerauLevenshtein.normalized_similarity(a, b) >= SIMILAR:
        return True
    # a version or generation after the name: "hbm3" is HBM, "llama3" is llama
    return len(a.rstrip("0123456789")) >= 3 and a.rstrip("0123456789") == b.rstrip("0123456789")


def names_subject(subject: str, entries: Sequence[GlossaryEntry]) -> bool:
    """Whether ``entries`` (one concept's) are about ``subject``: a name of theirs is the subject, is part of
    it or holds it ("kv cache size", "loras", "paged attention"), or every word of it is in their text. A
    subject not in Latin letters counts as named (this check cannot read Russian inflections)."""
    if not latin_term(subject) or not entries:
        return True
    asked = _TOKEN.findall(fold(subject))
    if not asked:
        return True
    for entry in entries:
        for name in entry.names:
            if compact(name) and _same(compact(subject), compact(name)):
                return True
            tokens = _TOKEN.findall(fold(name))
            extra = [a for a in asked if not any(_same(t, a) for t in tokens) and not a.isdigit()]  # "stage 3"
            if tokens and all(any(_same(t, a) for a in asked) for t in tokens) \
                    and all(word in _GENERIC for word in extra):
                return True  # the name, and words that keep it the same thing
            if tokens and all(any(_same(a, t) for t in tokens) for a in asked):
                return True  # part of the name ("paged" of PagedAttention is not asked alone often, "lora")
            # "spot pricing", "spot capacity": the offering «Spot Instance» names (its name is an offering's too)
            named, core = [a for a in asked if a not in _OFFERING], [t for t in tokens if t not in _OFFERING]
            if named and core and len(core) < len(tokens) and len(named) < len(asked) \
                    and all(any(_same(a, t) for t in core) for a in named) \
                    and all(any(_same(t, a) for a in named) for t in core):
                return True
    text = set(_TOKEN.findall(fold(" ".join(entry.passage() for entry in entries))))
    return all(any(_same(a, t) for t in text) for a in asked)


def subject_first(question: str, entries: Sequence[GlossaryEntry]) -> tuple[list[GlossaryEntry], str | None]:
    """A definition question's context with the concept that names its subject first, or the subject the
    context has no concept for (then the glossary lacks it: a definition of another thing is no answer)."""
    subject = definition_subject(question)
    if subject is None:
        return list(entries), None
    for concept in dict.fromkeys(entry.concept for entry in entries):
        own = [entry for entry in entries if entry.concept == concept]
        if names_subject(subject, own):
            return [*own, *(entry for entry in entries if entry.concept != concept)], None
    return list(entries), subject
