"""Which glossary entries an answer may use, and what kind of question it is (retrieval policy).

* A follow-up ("а сколько у неё памяти?") is searched together with the previous user turn.
* When retrieval is sure, the context is the first concept's entries alone (:func:`focus`): a small model
  given distractors next to the right entry often copies a distractor.
* A definition question ("что такое X", "what is X") and a comparison ("чем X отличается от Y", "X vs Y") are
  answered with the glossary's own sentences (:mod:`rag.answering.extractive`), so they are recognised here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from rag.glossary import GlossaryEntry
from rag.retrieval.retriever import Hit, SearchResult
from rag.subject import names_subject, own_subject
from rag.text import compact, fold, is_russian_word

# On the in-scope eval questions, every one whose runner-up concept scored under 0.6 of the first hit had
# the right entry first: 119 by the fused score (at 0.7 one did not), 81 by the BM25 score (none wrong
# even at 0.7). Together they narrow 127 of the 159 in-scope contexts, none without the right entry.
FOCUS_MARGIN = 0.6

# Short questions that lean on the previous turn ("а сколько у неё памяти?", "and its bandwidth?").
_FOLLOW_UP = re.compile(
    r"(?i)(^\s*(а|и|and|what about|how about)\b)|\b(он|она|оно|они|его|её|ее|их|неё|нее|ней|нём|нем|ним|"
    r"него|этот|эта|это|эти|этой|этого|этих|тот|та|те|такой|такая|it|its|they|them|their|this|that|"
    r"these|those)\b"
)
_DEFINITION = re.compile(
    # «а что такое спот?», "and what is a committed term?": a follow-up's conjunction first
    r"(?i)^\s*((а|и|ну|ну\s+а|and|so|ok|okay|then),?\s+)?(что\s+(такое|это|это\s+такое|значит|означает|за)\b|кто\s+такой|дай(те)?\s+определение|"
    r"определение\b|объясни(те)?,?\s+(что\s+такое|термин)|расскажи(те)?\s+(о|об|про|что\s+такое)\b|"
    r"what\s+(is|are|'s)\s+(an?\s+|the\s+)?|what's\s+|define\b|definition\s+of\b|explain\s+(what\s+)?|"
    r"tell\s+me\s+about\b|meaning\s+of\b)"
)
_DEFINITION_TAIL = re.compile(r"(?i)(\s+—?\s*это\s+что(\s+такое)?|\s+это\s+что|\s+что\s+это(\s+такое)?|"
                              r"\s+означает\s+что|\s+meaning|\s+means?\s+what)\s*\??\s*$")
# "чем X отличается от Y", "разница между X и Y", "X vs Y", "difference between X and Y", "X или Y: что…"
_COMPARISONS = (
    re.compile(r"(?i)чем\s+(?P<x>.+?)\s+отлича\w*\s+от\s+(?P<y>.+?)\s*\??$"),
    re.compile(r"(?i)чем\s+отлича\w*\s+(?P<x>.+?)\s+от\s+(?P<y>.+?)\s*\??$"),
    re.compile(r"(?i)(?P<x>.+?)\s+отлича\w*\s+от\s+(?P<y>.+?)\s*\??$"),
    # the two named first, the question after them: «лора и qlora в чём разница по-человечески?», «префилл и декод
    # это одно и то же или разные вещи?», "prefill and decode, are they the same thing?"
    re.compile(r"(?i)^(?P<x>[^?,.:;]+?)\s+и\s+(?P<y>[^?,.:;]+?)\s*[,—–-]?\s*(?:это\s+)?(?:в\s+ч[её]м\s+(?:у\s+них\s+)?"
               r"(?:разница|различи\w*|отлич\w*)|(?:одно\s+и\s+то\s+же|одинаков\w*|то\s+же\s+самое)(?!\s+или\s+нет)"
               r"|разные\s+(?:вещи|штуки)"
               r"|чем\s+(?:они\s+)?отлича\w*)"),
    re.compile(r"(?i)^(?:(?:are|is)\s+)?(?P<x>[^?,.:;]+?)\s+(?:and|&)\s+(?P<y>[^?,.:;]+?)\s*[,—–-]?\s*(?:what'?s\s+the\s+"
               r"(?:actual\s+|real\s+)?diff\w*|(?:are\s+they\s+|is\s+it\s+)?(?:the\s+)?same\s+thing(?!\s+or\s+not)"
               r"|different\s+things"
               r"|how\s+(?:do|are)\s+they\s+differ\w*)"),
    re.compile(r"(?i)(?:в\s+ч[её]м\s+)?(?:разница|различи\w*|отлич\w*)\s+(?:между\s+)?(?P<x>.+?)\s+и\s+(?P<y>.+?)"
               r"\s*\??$"),
    re.compile(r"(?i)(?:сравни\w*|compare)\s+(?P<x>.+?)\s+(?:и|с|and|with|to)\s+(?P<y>.+?)\s*\??$"),
    re.compile(r"(?i)(?:what(?:'s|\s+is)\s+the\s+)?difference\s+between\s+(?P<x>.+?)\s+and\s+(?P<y>.+?)\s*\??$"),
    re.compile(r"(?i)how\s+(?:is|are|does|do)\s+(?P<x>.+?)\s+differ\w*\s+from\s+(?P<y>.+?)\s*\??$"),
    # the right side ends with its sentence ("… 64 or 128. what do I get by raising it?" compares no names)
    re.compile(r"(?i)^(?P<x>[^?]+?)\s+(?:vs\.?|versus|против)\s+(?P<y>(?:[^?.!]|\.(?!\s))+?)\s*\??$"),
    re.compile(r"(?i)^(?P<x>[^?]+?)\s+(?:или|or)\s+(?P<y>(?:[^?,.!]|\.(?!\s))+?)\s*[?,:]"),
)
_SIDE_START = re.compile(r"^.*(:|\s[—–]\s)\s*")
# a left "side" that is only the question («что лучше», "which is better"): the name comes after it
_ASKS_WHICH = re.compile(r"(?i)^(что|кто|какой|какая|какое|какую|which|what('?s|\s+is)?)(\s+(one|is|же))?"
                         r"(\s+(лучше|выбрать|брать|взять|быстрее|дешевле|выгоднее|better|faster|cheaper|best"
                         r"|to\s+(choose|pick|use|take)))?$")
_SIDE_FILLER = re.compile(r"(?i)^((whats|what'?s|what\s+is|what\s+are|explain|объясни|(the\s+)?difference\s+between"
                          r"|разница\s+между|разницу\s+между)\s+)?((the|a|an|как|how)\s+)?"
                          r"|\s+(в\s+ч[её]м\s+разница|difference|разница)$")
# where a side's name ends: a clause ("…, обоим нужен loss scaling?", "… - do both need…") or a circumstance
_SIDE_END = re.compile(r"(?i)\s*([,;:(]|\s[-–—]\s|\s(при|для|во\s+время|в\s+плане|по|when|for|during|in\s+terms)\s"
                       r"|\s\w+-wise\b|\s(in\s+plain\s+english|in\s+simple\s+(terms|words)|простыми\s+словами|по-простому)\b).*$")

# a side's words that do not name it: "or just do rag", «или просто взять rag»; "should we finetune…"
_SIDE_HEDGE = re.compile(r"(?i)^((just|only|simply|rather|instead|просто|только|лучше|сразу)\s+)+"
                         r"((do|use|go\s+with|try|pick|делать|сделать|юзать|использовать|взять|брать|пойти\s+в)\s+)?"
                         r"|^((should|shall|do|can|could|would)\s+(we|i|you|u)\s+|(нам|мне)\s+(лучше\s+)?)")
_NUMBER = re.compile(r"^[\d.,\s%x×]+$")
_NOT = re.compile(r"(?i)^(нет|не|not|no|nope)$")
# a side of a comparison that points back ("а чем она отличается от QLoRA?" after "что такое LoRA?")
_ANAPHOR = re.compile(r"(?i)^(он|она|оно|они|это|этот|эта|эти|то|it|this|that|they|them|these|those|"
                      r"the\s+(former|latter))$")
# "а FSDP?", "and FSDP?", "what about FSDP?": the previous question asked again of another term
_ELLIPTICAL = re.compile(r"(?i)^\s*(?:а|и|and|what\s+about|how\s+about)\s+(?:про\s+|about\s+)?(?P<rest>[^?]{1,40}?)"
                         r"\s*\??\s*$")

# "а сколько у неё памяти?" is a follow-up on the same thing, not "what is <that>"
_NOT_A_TERM = re.compile(
    r"(?i)\b(сколько|как\w*|что|чем|зачем|почему|где|когда|кто|можно|нужно|надо|ли|есть|для|"
    r"он|она|оно|они|его|её|ее|их|неё|нее|ней|нём|нем|ним|него|этот|эта|это|эти|тот|та|те|"
    r"how|what|why|which|where|when|who|can|is|are|does|do|for|it|its|they|them|this|that|these|those)\b")

QuestionKind = Literal["definition", "comparison", "other"]


class Retriever(Protocol):
    """What answering needs of :class:`rag.retrieval.retriever.HybridRetriever`."""

    def search(self, query: str, k: int = ...) -> SearchResult: ...


@dataclass(frozen=True)
class Comparison:
    """The two sides of a comparison question, each resolved to its concept's entries."""

    left: list[GlossaryEntry]
    right: list[GlossaryEntry]
    joint: list[GlossaryEntry]  # comparison entries that name both sides ("RAG и fine-tuning")
    missing: tuple[str, ...] = ()  # a side the glossary has no entry on, as the user wrote it


# an "it" that points at nothing: "is spot worth it?", "is it possible to…", «стоит ли оно того»
_IDIOMATIC_IT = re.compile(r"(?i)\bworth\s+it\b|\bis\s+it\s+(possible|true|ok|okay|normal|safe|a\s+good\s+idea)"
                           r"(\s+that)?\b|\bit\s+depends\b|\bстоит\s+ли\s+оно\s+того\b")


def looks_like_follow_up(question: str) -> bool:
    if own_subject(question) is not None:
        return False  # «что такое rag и зачем он нужен?»: "он" is the question's own subject
    return len(question.split()) <= 10 and bool(_FOLLOW_UP.search(_IDIOMATIC_IT.sub(" ", question)))


def elliptical_subject(question: str) -> str | None:
    """What an elliptical follow-up asks about: "FSDP" in "а FSDP?" (None for anything longer)."""
    match = _ELLIPTICAL.match(question)
    if match is None or len(match.group("rest").split()) > 4 or _NOT_A_TERM.search(match.group("rest")):
        return None
    return match.group("rest").strip(" ,.:;«»\"'") or None


# "а чем они отличаются?", "what's the difference between them?", «в чём разница?»: the two things asked just before
_THEIR_DIFFERENCE = re.compile(
    r"(?i)^\W*(?:(?:а|и|ну|так|and|so|ok|okay),?\s+)?(?:(?:чем|в\s+ч[её]м)\s+(?:же\s+)?(?:они|эти\s+(?:две|два)\s+\w+)"
    r"\s+(?:отличаются|различаются|разные)|в\s+ч[её]м\s+(?:же\s+)?(?:у\s+них\s+)?разница(?:\s+между\s+ними)?"
    r"|(?:какая|и\s+какая)\s+(?:между\s+ними\s+)?разница(?:\s+между\s+ними)?|это\s+(?:одно\s+и\s+то\s+же|разные\s+вещи)"
    r"|what'?s\s+the\s+difference(?:\s+between\s+(?:them|the\s+two|these|those))?|how\s+(?:are|do)\s+they\s+differ(?:ent)?"
    r"|(?:are\s+they|is\s+it)\s+the\s+same(?:\s+thing)?|difference\s*)\s*\??\s*$")


def their_difference(question: str, earlier: Sequence[str]) -> str | None:
    """A comparison asked with a pronoun ("а чем они отличаются?") after two questions about one thing each
    («что такое lora», «а qlora?»): the same comparison with both named, or None. ``earlier``: the user's
    questions before this one, newest first."""
    if not _THEIR_DIFFERENCE.match(" ".join(question.split())) or len(earlier) < 2:
        return None
    newer, older = (own_subject(text) or elliptical_subject(text) for text in earlier[:2])
    if not newer or not older or newer.lower() == older.lower():
        return None
    return f"чем {older} отличается от {newer}?"


def is_definition_question(question: str) -> bool:
    return bool(_DEFINITION.search(question) or _DEFINITION_TAIL.search(question))


# where the right side is found ("a checkpoint in stable diffusion", «чекпоинт в sd»): a circumstance, when the side
# without it is a concept (resolve_comparison tries it first)
_WHERE = re.compile(r"(?i)\s(in|on|в|на|у)\s.*$")


def comparison_sides(question: str, *, where: bool = False) -> tuple[str, str] | None:
    """The two things a comparison question compares, as the user wrote them (``where``: the right side without
    where it is found)."""
    text = " ".join(question.split())
    for pattern in _COMPARISONS:
        match = pattern.search(text)
        if match:
            # "что лучше для инференса: vLLM или TGI?": the left side starts after the question's own clause
            left_text = _SIDE_START.sub("", match.group("x")) or match.group("x")
            left = _SIDE_FILLER.sub("", _SIDE_END.sub("", left_text).strip(" ,.:;«»\"'")).strip()
            right = _SIDE_FILLER.sub("", _SIDE_END.sub("", match.group("y")).strip(" ,.:;«»\"'")).strip()
            left, right = _SIDE_HEDGE.sub("", left).strip() or left, _SIDE_HEDGE.sub("", right).strip() or right
            if where:
                right = _WHERE.sub("", right).strip() or right
            if _ASKS_WHICH.match(left) or not left:
                # "что лучше для инференса vllm или tgi?": the question and its circumstance come first, the
                # left side's name last, as long as the right one
                left = " ".join(left_text.strip(" ,.:;«»\"'?").split()[-len(right.split()):]) if right else ""
            if _NUMBER.match(left) or _NUMBER.match(right) or _NOT.match(right):
                # "r=64 or 128?": two values of one setting; «…одно и то же или нет?», "worth it or not?": a yes or no
                return None
            if left and right and left.lower() != right.lower() and len(left) <= 60 and len(right) <= 60:
                return left, right
    return None


def focus(hits: list[Hit], lexical_runner_up: float | None = None, named: bool = False) -> list[Hit]:
    """The context for a question retrieval is sure about: the first concept's entries alone.

    Sure means the best hit of any other concept scores under ``FOCUS_MARGIN`` of the first, in the fused
    ranking or in BM25's own scores (``lexical_runner_up``: the fused score of a Russian question is often
    BM25's rank alone, which hides how far ahead the first hit is), or the question asks about the first
    concept by name (``named``: :attr:`SearchResult.names_first`). When retrieval is unsure, the model sees
    every hit and the citations show which one it used.
    """
    if not hits:
        return hits
    concept = hits[0].entry.concept
    others = [hit for hit in hits if hit.entry.concept != concept]
    lexically_sure = lexical_runner_up is not None and lexical_runner_up < FOCUS_MARGIN
    if others and others[0].score >= FOCUS_MARGIN * hits[0].score and not lexically_sure and not named:
        return hits
    return [hit for hit in hits if hit.entry.concept == concept]


def interleave(first: list[Hit], second: list[Hit]) -> list[Hit]:
    """Hits of both searches, alternating and best-ranked first, without duplicate entries."""
    seen: set[str] = set()
    merged = []
    for pair in itertools.zip_longest(first, second):
        for hit in pair:
            if hit is not None and hit.entry.id not in seen:
                seen.add(hit.entry.id)
                merged.append(hit)
    return merged


def choose_context(search: Sequence[SearchResult], question: str, *, follow_up_of: SearchResult | None,
                   top_k: int) -> list[GlossaryEntry] | None:
    """The context entries from the question's own search (``search[0]``) and, for a follow-up, the search
    of the question with the previous user turn (``follow_up_of``); None when out of scope."""
    alone = search[0]
    if follow_up_of is not None:
        if follow_up_of.in_scope:
            hits = interleave(list(follow_up_of.hits), list(alone.hits) if alone.in_scope else [])
        elif alone.in_scope:
            hits = list(alone.hits)
        else:
            return None
    elif alone.in_scope:
        hits = focus(list(alone.hits), alone.lexical_runner_up, named=alone.names_first)
    else:
        return None
    entries = [hit.entry for hit in hits][:top_k]
    return entries or None


def concept_entries(entries: Sequence[GlossaryEntry], concept: str) -> list[GlossaryEntry]:
    return [entry for entry in entries if entry.concept == concept]


def resolve_comparison(retriever: Retriever, all_entries: Sequence[GlossaryEntry], question: str,
                       previous: str | None = None, *, earlier: Sequence[str] = ()) -> Comparison | None:
    """Both sides of a comparison question, each resolved to a glossary concept: their own entries and
    the comparison entries naming both. A side with no entry of its own ("RAG" is only named by "RAG и
    fine-tuning") is answered by the comparison entry alone. A side the glossary knows nothing of
    ("safetensors" in «чем GGUF отличается от safetensors?») is ``missing``: the other side is still quoted,
    never left to the model, which attributes one side's words to the other. ``previous``: the question a
    follow-up comes after, for a side that points back to it ("а чем она отличается от QLoRA?"); ``earlier``: the
    user's questions before, newest first, for a pronoun comparison («а чем они отличаются?», their_difference)."""
    both = their_difference(question, earlier)
    if both is not None:
        question, previous = both, None
    elif previous is None and earlier:
        previous = earlier[0]
    sides = comparison_sides(question)
    if sides is None:
        return None
    # "a checkpoint in stable diffusion": the side without where it is found, when that is a concept
    narrower = comparison_sides(question, where=True)
    if narrower is not None and narrower != sides \
            and _side_concept(retriever, all_entries, narrower[1], previous) is not None:
        sides = narrower
    if not _NAMED_COMPARISON.search(question) and len(sides[0].split()) >= CLAUSE_WORDS and names_nothing(sides[1]):
        return None  # "does flash attention reduce memory or just speed?": two things it may do, not two things
    sides = _shared_head(retriever, all_entries, sides)
    concepts = [_side_concept(retriever, all_entries, side, previous) for side in sides]
    if concepts[0] is None and concepts[1] is None:
        return None
    # a side as written or inflected («от чекпоинта» is «чекпоинт»): its stem in a comparison entry's name
    side_keys = [side.lower() for side in sides]
    stems = [key[:max(4, len(key) - 2)] for key in side_keys]
    joint = [e for e in all_entries if e.category == "comparisons"
             and all(any(key in name.lower() or name.lower() in key or stem in name.lower()
                         for name in (e.term, *e.aliases))
                     for key, stem in zip(side_keys, stems, strict=True))]
    if concepts[0] == concepts[1]:
        if joint:
            return Comparison([], [], joint)
        # "top-p" and "top-k" both found top-p's entry: the side that does not name it has none of its own
        own = [e for e in concept_entries(all_entries, concepts[0] or "") if e.category != "comparisons"]
        naming = [any(compact(side) == compact(name) for e in own for name in e.names) for side in sides]
        if own and naming.count(True) == 1:
            return Comparison(own, [], [], (sides[naming.index(False)],))
        return None
    left, right = ([e for e in concept_entries(all_entries, concept) if e.category != "comparisons"]
                   if concept else [] for concept in concepts)
    missing = tuple(side for side, concept in zip(sides, concepts, strict=True) if concept is None)
    if not _NAMED_COMPARISON.search(question) and any(names_nothing(side) or _ASKS_OF.search(side) for side in missing):
        # «…или просто время?»: "время" is no thing compared; "is l40s good for training or only inference?":
        # "is l40s good" is what is asked of the L40S, two uses the alternatives
        return None
    if not (left and right) and not joint and not (missing and (left or right)):
        return None
    return Comparison(left, right, joint, missing)


def _side_concept(retriever: Retriever, all_entries: Sequence[GlossaryEntry], side: str, previous: str | None
                  ) -> str | None:
    query = previous if previous and _ANAPHOR.match(side) else side
    result = retriever.search(query, 3)
    concept = result.hits[0].entry.concept if result.in_scope and result.hits else None
    # "tensorrt" finds «Tensor»: a concept that is not the side named is no side of the comparison
    if concept is not None and query is side and len(side.split()) <= 3 \
            and not names_subject(side, concept_entries(all_entries, concept)):
        return None
    # "sxm" finds «NVIDIA A100» by its alias «A100 SXM»: a GPU is named by its model number, a side without one
    # (a form factor, a bus) is not that GPU
    if concept is not None and query is side and not re.search(r"\d", side) \
            and all(entry.category == "hardware" and any(re.search(r"\d", name) for name in entry.names)
                    for entry in concept_entries(all_entries, concept)):
        return None
    return concept


# a comparison said in so many words: both sides are things compared ("precision vs recall"), unlike the two
# alternatives of an "or", which may be what a thing does ("reduce memory or just speed?")
_NAMED_COMPARISON = re.compile(r"(?i)\bvs\.?\b|\bversus\b|\bпротив\b|разниц|различ|отлич|\bdiffer|\bdiff\b|compar|сравн"
                               r"|same\s+thing|одно\s+и\s+то\s+же")
# a side that is a question asked of something ("is l40s good", «подойдёт ли l40s»), not a thing's name
_ASKS_OF = re.compile(r"(?i)^(is|are|does|do|can|could|should|will|would|was|were|has|have)\s|\sли(\s|$)")
# a left side this long is a clause ("does flash attention reduce memory"), not a name
CLAUSE_WORDS = 4
# a word the language has (the question's own words, not a name): English by its frequency in wordfreq's list
COMMON_ENGLISH_ZIPF = 3.0


def names_nothing(side: str) -> bool:
    """A comparison side made only of the language's common words ("just speed", «по-человечески», «разные
    вещи»): a side no entry resolved and that names nothing is no side, unlike "safetensors"."""
    from wordfreq import zipf_frequency

    words = re.findall(r"[^\W\d_]+", fold(side))
    if not words or re.search(r"\d", side):
        return False
    return all(is_russian_word(word) if re.match(r"[а-я]", word)
               else word.isascii() and zipf_frequency(word, "en") >= COMMON_ENGLISH_ZIPF for word in words)


def _shared_head(retriever: Retriever, all_entries: Sequence[GlossaryEntry], sides: tuple[str, str],
                 ) -> tuple[str, str]:
    """"tensor and pipeline parallelism": the right side's last words are the left's too, when the left with
    them is a concept that names it ("tensor parallelism", not «Tensor»); "lora and full fine-tuning" stays
    "lora" (no concept is "lora fine-tuning"). The other way round, «тензорный параллелизм или пайплайн»: the
    left's last words are the right's too when a name of the concept found holds them («пайплайн-параллелизм»,
    not «Retrieval Pipeline»)."""
    left, right = sides
    words_right = right.split()
    words_left = left.split()
    if len(words_right) == 1 and 2 <= len(words_left) <= 3:
        head = words_left[1:]
        joined = f"{right} {' '.join(head)}"
        result = retriever.search(joined, 3)
        if result.in_scope and result.hits:
            names = [compact(name) for entry in concept_entries(all_entries, result.hits[0].entry.concept)
                     for name in entry.names]
            if any(compact(word)[:6] in name for word in head for name in names) \
                    and any(compact(right)[:5] in name for name in names):
                return left, joined
        return sides
    if len(words_left) != 1 or len(words_right) < 2:
        return sides
    joined = f"{left} {' '.join(words_right[1:])}"
    result = retriever.search(joined, 3)
    if not (result.in_scope and result.hits):
        return sides
    concept = result.hits[0].entry.concept
    return (joined, right) if names_subject(joined, concept_entries(all_entries, concept)) else sides


def question_kind(question: str) -> QuestionKind:
    if comparison_sides(question) is not None:
        return "comparison"
    return "definition" if is_definition_question(question) else "other"
