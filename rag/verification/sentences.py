"""Claim-level verification of the model's answer, one sentence at a time, before anything is shown.

A citation that shares words with its entry is not proof: a swapped definition ("DDP shards the model"),
a negated rule ("you can stop and not pay"), an inverted comparison ("a smaller batch needs less memory")
or an invented figure ("the H100 has 16 GB") all share the cited entry's words. So each sentence must pass
every check, or it is never shown — not in a draft, not in an edit, not in the final message:

* **alignment** (:mod:`rag.verification.alignment`) — the sentence restates one sentence of a context entry (its
  Russian text or its curated English rendering): every content word, figure and unit is that sentence's,
  no word more often, each under the same negation, each term in its place. A sentence citing the wrong
  number is attributed to the entry it restates; one that restates none is not shown;
* **yes/no** — a yes or a no is never the model's: the company's rules answer those (:mod:`rag.rules`); and a
  sentence that restates a yes/no question ("Gradient checkpointing делает обучение быстрее" to «…делает
  обучение быстрее?») affirms it: every word of the claim it repeats must be in the cited entry;
* **subject** — what a sentence defines ("X — это …", "X is a …") must be the cited concept; a sentence
  that names none is about the question's concept, and a figure it states must be a fact of a concept the
  sentence or the question names ("…141 ГБ HBM3e" citing the H200 entry, to a question about Llama 3 70B);
* **language** — a sentence with no Russian word does not answer a Russian question, and a Russian sentence
  does not answer an English one;
* **echo** — what a sentence says beyond the question's own words and the cited entry's names must be in
  that entry: a restated question says nothing.

How well this holds is measured, class by class on entries held out from tuning, by ``anchorgpu bench
verifier`` (:mod:`dev.eval.mutants`). :class:`SentenceVerifier` checks sentences as they complete while the answer
streams; the answer is the sentences that passed, with their citations renumbered in the order the sources
are listed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rag.glossary import GlossaryEntry
from rag.language import Lang, is_why_question, is_yes_no_question, prevailing_lang
from rag.text import compact, content_lemmas, lemma, words
from rag.verification.alignment import SENTENCE_JOIN, align, same_root
from rag.verification.citations import CITATION, strip_citations, verify_citations
from rag.verification.mentions import ConceptNames, concept_names, holds_part

MIN_SUPPORT = 0.25  # what a sentence adds to the question: at least this share of it is the entry's
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?!\[)|\n+")
# A number a sentence states: not the digits of a name (H100, FP16, Q4_K_M), but 80 in "80 ГБ" or "80GB".
_NUMBER = re.compile(r"(?<![A-Za-zА-Яа-яЁё\d_.,])(\d+(?:[.,]\d+)?)")
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# A Russian question answered by a sentence without one Russian word got an English answer, not a
# Russian one ("Loss scaling is necessary for training in FP16 [1]" to «нужен ли loss scaling…?»)
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_CYRILLIC_NAMES = re.compile(r"«[^»]*»")  # a quoted Russian name in an English sentence keeps it English
_YES_NO_START = re.compile(r"(?i)^\s*(да|нет|конечно|разумеется|yes|no|sure|of\s+course|certainly)\b[\s,.!—-]")

Reason = Literal["unsupported", "number", "subject", "swapped", "polarity", "yes_no", "language", "echo", "claim"]
_DEFINED = re.compile(r"(?i)^\s*(?P<head>[^—–:;,.()]{1,60}?)(?:\s*\([^)]{0,60}\))?\s+(?:[—–-]\s|is\s+(?:a|an|the)\s|"
                      r"are\s+|является\s)")
# "X is …" without an article ("PCIe is NVIDIA datacenter GPU …"): what is defined when X is a name as a whole
_IS = re.compile(r"(?i)^\s*(?P<head>[^—–:;,.()]{1,60}?)\s+(?:is|are)\s+(?!not\b)")
_PARENTHESIZED = re.compile(r"\s*[()]\s*")
# a sentence giving a cause claims one: the cited entry must state a cause too
_CAUSE = re.compile(r"(?i)\b(потому\s+что|так\s+как|поскольку|из-за|благодаря|вследствие|поэтому|следовательно|"
                    r"because|due\s+to|as\s+a\s+result|therefore|thanks\s+to|hence)\b")
# comparisons a claim can turn on; "more" and "than" are stopwords to the lemma checks
_COMPARATIVE = re.compile(
    r"(?i)\b(more|less|fewer|better|worse|faster|slower|higher|lower|bigger|larger|smaller|greater|cheaper|"
    r"больше|меньше|лучше|хуже|быстрее|медленнее|выше|ниже|сильнее|слабее|дешевле|дороже|точнее|шире|уже)\b")
_QUOTE_MARKS = re.compile(r"[«»„“”]")


@dataclass(frozen=True)
class SentenceCheck:
    text: str  # the sentence without citation marks
    cited: tuple[int, ...]  # context numbers (1-based) of the entries that support it
    rejected: Reason | None = None

    @property
    def ok(self) -> bool:
        return self.rejected is None


@dataclass
class VerifiedAnswer:
    """The sentences that passed, renumbered to the sources' order, and the ones that did not."""

    text: str = ""
    cited: list[int] = field(default_factory=list)  # context numbers in the order of first citation
    rejected: list[SentenceCheck] = field(default_factory=list)
    shown: set[str] = field(default_factory=set)  # compact keys of the sentences shown: a repeat is dropped


def _numbers(text: str, pattern: re.Pattern[str] = _NUMBER) -> set[str]:
    return {number.replace(",", ".").rstrip("0").rstrip(".") if "." in number.replace(",", ".") else number
            for number in pattern.findall(text)}


def _sentences(text: str) -> list[str]:
    """The sentences a generated sentence may restate: each of the text's, and each two adjacent ones as
    one (the model joins «BM25 не является нейросетью. Он относится к…» into one sentence), kept apart as
    clauses so that no term may cross from one to the other."""
    single = [sentence.strip() for sentence in SENTENCE_END.split(text) if sentence.strip()]
    return single + [f"{first}{SENTENCE_JOIN}{second}" for first, second in itertools.pairwise(single)]


def _comparatives(text: str) -> set[str]:
    return {word.lower() for word in _COMPARATIVE.findall(text)}


def _in_words(word: str, entry_words: set[str]) -> bool:
    return word in entry_words or any(same_root(word, other) for other in entry_words)


class SentenceVerifier:
    """Checks the sentences of one answer against its context entries and question."""

    def __init__(self, entries: Sequence[GlossaryEntry], question: str, answer_lang: Lang | None = None,
                 glossary: Sequence[GlossaryEntry] | None = None, about: str | None = None,
                 renderings: Mapping[str, str] | None = None) -> None:
        """``glossary``: every entry, so that a sentence naming a concept outside the context is judged by
        it (without it only the context's concepts are known). ``about``: the question a follow-up follows,
        whose concepts the follow-up is about too. ``renderings``: entry id → its curated English rendering,
        the source an English sentence is aligned with."""
        self.entries = list(entries)
        renderings = renderings or {}
        self._renderings = [renderings.get(e.id, "") for e in self.entries]
        # the sentences a generated sentence may restate: the entry's own and its rendering's
        self._source_sentences = [[*_sentences(e.definition), *_sentences(rendering)]
                                  for e, rendering in zip(self.entries, self._renderings, strict=True)]
        self._glossary: ConceptNames | None = concept_names(tuple(glossary)) if glossary else None
        self.question_concepts = self._glossary.named(f"{question} {about or ''}") if self._glossary else set()
        self.answer_lang = answer_lang
        self._question = question
        self.question_numbers = _numbers(question, _ANY_NUMBER)
        self.question_words = set(content_lemmas(question))
        self.yes_no = is_yes_no_question(question)
        # "почему DDP шардирует параметры?" takes "DDP шардирует параметры" for granted, as a yes/no question
        # asks it: a sentence repeating it states it
        self.presupposes = self.yes_no or is_why_question(question)
        self._words = [set(content_lemmas(f"{e.term} {' '.join(e.aliases)} {e.definition} {rendering}"))
                       for e, rendering in zip(self.entries, self._renderings, strict=True)]
        self._names = [[compact(name) for name in e.names if len(compact(name)) >= 3] for e in self.entries]
        self._name_words = [set(content_lemmas(" ".join(e.names))) for e in self.entries]
        # each name as its lemmas, "DistributedDataParallel (DDP)" under either spelling (:meth:`_names_a_part`)
        self._name_lemmas = [{tuple(lemma(word) for word in words(spelling)) for name in e.names
                              for spelling in (name, *_PARENTHESIZED.split(name))} for e in self.entries]
        self._numbers = [_numbers(f"{e.term} {e.definition}", _ANY_NUMBER) for e in self.entries]
        self._question_context_concepts = self._named_concepts(compact(question))
        self._question_comparatives = _comparatives(question)

    # ---------------------------------------------------------------- one sentence

    def check(self, sentence: str) -> SentenceCheck:
        sentence, _ = verify_citations(sentence, len(self.entries))
        numbers = [int(n) for group in CITATION.findall(sentence) for n in re.split(r"[,;]", group)]
        # guillemets mark the glossary's own words in an answer; the model's text never wears them
        body = _QUOTE_MARKS.sub("", strip_citations(sentence)).strip()
        if not body:
            return SentenceCheck(body, ())
        if body.endswith("?"):  # a question asks, it answers nothing («Сколько дней в неделе аренды [1]?»)
            return SentenceCheck(body, (), "echo")
        if self.answer_lang == "ru" and not _CYRILLIC.search(body):
            return SentenceCheck(body, (), "language")
        if self.answer_lang == "en" and prevailing_lang(_CYRILLIC_NAMES.sub(" ", body)) == "ru":
            return SentenceCheck(body, (), "language")  # «GGUF — это формат…» to an English question
        lemmas = set(content_lemmas(body))
        key = compact(body)
        if self._yes_no(body):
            return SentenceCheck(body, (), "yes_no")
        cited, problem = self._aligned(body, numbers)
        if problem is not None:
            return SentenceCheck(body, (), problem)
        reason = (self._defined_subject(body, key, cited) or self._claim(body, lemmas, cited)
                  or self._echo(lemmas, cited))
        return SentenceCheck(body, cited, reason)

    def _aligned(self, body: str, numbers: Sequence[int]) -> tuple[tuple[int, ...], Reason | None]:
        """The entry whose one sentence the sentence restates (:mod:`rag.verification.alignment`): a cited entry first,
        else another of the context (the small model misnumbers citations); or why none does."""
        cited = [n for n in dict.fromkeys(numbers) if 1 <= n <= len(self.entries)]
        others = [n for n in range(1, len(self.entries) + 1) if n not in cited]
        first: Reason | None = None
        for n in [*cited, *others]:
            entry = self.entries[n - 1]
            found = align(body, self._source_sentences[n - 1], free=entry.names)
            if found.problem is None:
                return (n,), None
            if first is None or (first == "unsupported" and found.problem != "unsupported"):
                first = found.problem  # the most telling reason: a swapped word beats an unknown one
        return (), first or "unsupported"

    def _defined_subject(self, body: str, key: str, cited: Sequence[int]) -> Reason | None:
        """"X — это …", "X is …": what is defined must be a cited concept, not one its entry only mentions
        («HBM — это более доступный аналог GDDR» citing GDDR's «…более доступный аналог HBM») nor one whose name
        is a part of the cited concept's or holds it («Токен — основная метрика скорости инференса» citing
        Tokens per Second); a sentence naming no concept is about the question's, so a cited entry must be one
        of those or speak of one."""
        glossary = self._glossary
        if any(self.entries[n - 1].category == "comparisons" for n in cited):
            return None
        defined = _DEFINED.match(body) or _IS.match(body)
        if defined and self._names_a_part(defined.group("head"), cited):
            return "swapped"
        if glossary is None:
            return None
        cited_concepts = {self.entries[n - 1].concept for n in cited}
        if defined:
            # the head must be a name, not a phrase containing one («Алгоритм изменения learning rate …
            # — обычно снижение со временем» defines no learning rate)
            head_key = compact(defined.group("head"))
            head = {concept for concept in glossary.named(defined.group("head")) | self._named_concepts(head_key)
                    if glossary.is_name_of(concept, head_key)} | glossary.named_as_a_whole(defined.group("head"))
            if head and not head & cited_concepts:
                return "swapped"
        cited_text = " ".join(f"{self.entries[n - 1].term} {self.entries[n - 1].definition}" for n in cited)
        named = glossary.named(body) | self._named_concepts(key)
        if not named and self.question_concepts and not any(
                concept in cited_concepts or glossary.mentioned(concept, cited_text)
                for concept in self.question_concepts):
            return "subject"
        # a figure belongs to a concept the sentence or the question names: «141 ГБ памяти HBM3e…» is the
        # H200's figure, no answer to a question about Llama 3 70B
        stated = _numbers(body) - self.question_numbers
        about = named | self.question_concepts | self._question_context_concepts
        if stated and about:
            owners = {self.entries[n - 1].concept for n in cited if stated & self._numbers[n - 1]}
            if owners and not owners & about:
                return "number"
        return None

    def _echo(self, lemmas: set[str], cited: Sequence[int]) -> Reason | None:
        """What the sentence says beyond the question's own words and the entry's names must be the entry's
        (in either of its languages); nothing added is a restatement, which answers nothing. A yes/no
        question restated is an affirmation, which :meth:`_claim` judges ("Для обучения в FP16 требуется
        loss scaling"). A word of the entry's word family counts as the entry's («требуется» for «требует»)."""
        said = lemmas - self.question_words - set().union(*(self._name_words[n - 1] for n in cited))
        if not said:
            return None if self.yes_no else "echo"  # a restated yes/no question: the claim check judged it
        best = max(self._related_support(said, self._words[n - 1]) for n in cited)
        return "echo" if best < MIN_SUPPORT else None

    def _claim(self, body: str, lemmas: set[str], cited: Sequence[int]) -> Reason | None:
        """A comparison the sentence repeats from the question ("why is GDDR faster than HBM?" → "GDDR is
        faster…") must be the cited entry's, and so must a cause it gives ("…, так как…"). A sentence
        answering a yes/no question with the question's own words affirms what it asks ("DDP шардирует
        параметры модели" to «DDP шардирует параметры модели?»), and so does one repeating what a why-question
        presupposes («почему DDP шардирует параметры?»): each content word it repeats from the question,
        beyond the concepts' names, must be in a cited entry — in that entry's language, so an English
        restatement of a Russian entry is not taken for a confirmation."""
        cited_text = " ".join(f"{self.entries[n - 1].definition} {self._renderings[n - 1]}" for n in cited)
        compared = _comparatives(body) & self._question_comparatives  # "BF16 is more precise than FP16"
        if compared - _comparatives(cited_text):
            return "claim"
        if _CAUSE.search(body) and not _CAUSE.search(cited_text):
            return "claim"  # «…требует больше памяти, так как увеличивает эффективность»: a cause of its own
        if not self.presupposes:
            return None
        names = set().union(*(self._name_words[n - 1] for n in cited))
        repeated = (lemmas & self.question_words) - names
        allowed = set().union(*(self._words[n - 1] for n in cited))
        return "claim" if any(not _in_words(word, allowed) for word in repeated) else None

    def _names_a_part(self, head: str, cited: Sequence[int]) -> bool:
        """The head is a proper part of a cited concept's name and no name of it: «Токен» of Tokens per Second,
        "Tensor" of Tensor Cores (known without the glossary: the words are the cited entry's own). A model
        number is its card's short name (H100 of NVIDIA H100), not a part."""
        head_words = tuple(lemma(word) for word in words(head))
        if not head_words or any(ch.isdigit() for ch in head):
            return False
        names = [name for n in cited for name in self._name_lemmas[n - 1]]
        return head_words not in names and any(holds_part(name, head_words) for name in names)

    @staticmethod
    def _related_support(sentence_words: set[str], entry_words: set[str]) -> float:
        """Like :meth:`_support`, a word of the entry's word family counting as the entry's."""
        if not sentence_words:
            return 0.0
        return sum(_in_words(word, entry_words) for word in sentence_words) / len(sentence_words)

    def _yes_no(self, body: str) -> Reason | None:
        return "yes_no" if self.yes_no and _YES_NO_START.match(body) else None

    def _named_concepts(self, key: str) -> set[str]:
        """Concepts whose names the sentence contains; a name inside a longer matched name of another concept
        ("attention" in "paged attention") does not count."""
        matched = [(self.entries[i].concept, name) for i, names in enumerate(self._names) for name in names
                   if name in key]
        return {concept for concept, name in matched
                if not any(other != concept and name in longer and name != longer for other, longer in matched)}

    # ---------------------------------------------------------------- a whole answer

    def verify(self, text: str) -> VerifiedAnswer:
        result = VerifiedAnswer()
        out: list[str] = []
        for sentence in SENTENCE_END.split(text):
            if not sentence.strip():
                continue
            shown = self.render(self.check(sentence), result)
            if shown:
                out.append(shown)
        result.text = " ".join(out).strip()
        return result

    def render(self, check: SentenceCheck, into: VerifiedAnswer) -> str:
        """The sentence as shown (citations renumbered to the sources' order), or "" when it failed."""
        if not check.ok or not check.text:
            if check.text:
                into.rejected.append(check)
            return ""
        if compact(check.text) in into.shown:  # the small model sometimes writes a sentence twice
            return ""
        into.shown.add(compact(check.text))
        for n in check.cited:
            if n not in into.cited:
                into.cited.append(n)
        marks = "".join(f"[{into.cited.index(n) + 1}]" for n in check.cited)
        stripped = check.text.rstrip(".!?…")
        return f"{stripped} {marks}{check.text[len(stripped):]}"
