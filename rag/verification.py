"""Claim-level verification of the model's answer, one sentence at a time, before anything is shown.

A citation that shares words with its entry is not proof: a swapped definition ("DDP shards the model"),
a negated rule ("you can stop and not pay") or an invented figure ("the H100 has 16 GB") all share the
cited entry's words. So each sentence must pass every check, or it is never shown — not in a draft, not
in an edit, not in the final message:

* **support** — the cited entry supports the sentence (shared content lemmas; across languages, the
  sentence names exactly one concept of the context); an uncited, well-supported sentence is attributed;
* **numbers** — every number the sentence states occurs in a cited entry or in the question;
* **subject** — a sentence about concept X is supported by X's own entries, not a neighbour's, and does
  not carry more of a neighbour's distinctive words than of X's (swapped definitions);
* **polarity** — the sentence negates what its closest source sentence states, or the reverse;
* **yes/no** — a yes or a no is never the model's: the company's rules answer those (:mod:`rag.rules`); and a
  sentence that restates a yes/no question ("Gradient checkpointing делает обучение быстрее" to «…делает
  обучение быстрее?») affirms it: every word of the claim it repeats must be in the cited entry;
* **glossary-wide subject** — a sentence that names a concept of the glossary (any, not only the context's)
  must cite that concept's entry or an entry that speaks of it ("Для BF16 требуется loss scaling" citing
  FP16's entry); a sentence that names none is about the question's concept, and a figure it states must be
  a fact of a concept the sentence or the question names ("…требует 141 ГБ" citing the H200 entry, to a
  question about Llama 3 70B);
* **language** — a sentence with no Russian word does not answer a Russian question;
* **echo** — what a sentence says beyond the question's own words and the cited entry's names must be in
  that entry: a restated question, or an entry named as the answer to a description it does not match
  ("…ценой лишних вычислений — можно использовать VRAM Offloading"), said nothing the entry states.

:class:`SentenceVerifier` checks sentences as they complete while the answer streams; the answer is the
sentences that passed, with their citations renumbered in the order the sources are listed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from rag.citations import CITATION, strip_citations, verify_citations
from rag.glossary import GlossaryEntry
from rag.mentions import ConceptNames, concept_names
from rag.prompt import Lang, detect_lang, prevailing_lang
from rag.text import compact, content_lemmas, lemma

MIN_SUPPORT = 0.25  # a kept citation: at least this share of the sentence's content words is in the entry
STRONG_SUPPORT = 0.6  # an uncited or mis-numbered sentence is attributed only when this well supported
RELATIVE_SUPPORT = 0.7  # ...and at least this share of the best entry's support (else it is misnumbered)
POLARITY_OVERLAP = 0.3  # a source sentence sharing this much with the sentence is the one it restates
# A sentence in another language than its entry shares only names, numbers and the bilingual thesaurus'
# tokens with it (rag.text.CANONICAL: память/memory, слой/layer…); naming the concept is not enough:
# "gradient checkpointing trades off accuracy and speed" names it and says the opposite of its entry.
CROSS_LANGUAGE_SHARED = 2
SWAP_MIN_WORDS = 2  # distinctive words of a neighbour's entry that make a sentence a swapped definition
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?!\[)|\n+")
# A number a sentence states: not the digits of a name (H100, FP16, Q4_K_M), but 80 in "80 ГБ" or "80GB".
_NUMBER = re.compile(r"(?<![A-Za-zА-Яа-яЁё\d_.,])(\d+(?:[.,]\d+)?)")
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# What a figure measures, read from the word after it: "30 дней" is not "30%", "900 ГБ/с" is not "900 ГБ"
_UNIT_WORDS = {
    "bandwidth": r"(гб|gb|тб|tb|мб|mb|гбит|gbit)\s*/\s*(с|s)\b",
    "percent": r"(%|процент|percent)",
    "memory": r"(гб|gb|гиб|gib|тб|tb|мб|mb|гигабайт|gigabyte|терабайт|terabyte)",
    "bits": r"(бит|bit)",
    "days": r"(дн|день|дня|дней|сут|days?\b)",
    "hours": r"(час|ч\b|hours?\b|h\b)",
    "weeks": r"(недел|weeks?\b)",
    "months": r"(месяц|months?\b)",
    "money": r"(usd|\$|доллар|dollar|руб|₽)",
    "watts": r"(вт\b|ватт|w\b|watts?\b)",
    "flops": r"(tflops|тфлопс|терафлопс|flops|флопс)",
}
_UNITS = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _UNIT_WORDS.items())
_AFTER_NUMBER = re.compile(r"\s*-?\s*(%|[^\W\d_]+(?:\s*/\s*[^\W\d_]+)?)")
# A Russian question answered by a sentence without one Russian word got an English answer, not a
# Russian one ("Loss scaling is necessary for training in FP16 [1]" to «нужен ли loss scaling…?»)
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
# "вместо хранения" / "instead of storing" negate what they govern: a sentence that "stores" restates a
# source that recomputes "instead of storing" with the opposite polarity
_NEGATIONS = frozenset({"не", "нет", "ни", "нельзя", "невозможно", "без", "вместо", "not", "no", "never",
                        "cannot", "without", "neither", "nor", "none", "nothing", "instead"})
_CLAUSE = re.compile(r"(?i),\s+|;\s+|\s+(?:и|а|но|однако|and|but|while|whereas)\s+")
# "X — это Y", "X is a Y": the class a sentence puts X in must be the cited entry's word, not the model's
_IS_A = re.compile(r"(?i)(?:\s[—–-]\s*это|\bэто|\bявляется|\bis\s+(?:a|an|the)|\bare)\s+([a-zа-яё0-9-]+)")
_NOT_A_NEGATION = re.compile(r"(?i)\b(не\s+только|not\s+only|no\s+matter)\b")
_YES_NO_START = re.compile(r"(?i)^\s*(да|нет|конечно|разумеется|yes|no|sure|of\s+course|certainly)\b[\s,.!—-]")
_YES_NO_QUESTION = re.compile(
    r"(?i)(\bли\b|^\s*(правда|верно|можно|нужно|надо|должен|обязательно)\b|^\s*(is|are|do|does|did|can|could|will|"
    r"would|should|must|has|have|was|were|may)\b)")
# «DDP шардирует параметры модели?»: a Russian question with no question word asks yes or no by intonation
_QUESTION_WORD = re.compile(
    r"(?i)\b(что|чем|ч[её]м|как\w*|зачем|почему|сколько|где|когда|кто|куда|откуда|какой|какая|какое|какие|каков\w*|"
    r"для\s+чего|объясни\w*|расскажи\w*|what|how|why|which|where|when|who|whom|whose|vs|versus|или|or)\b")

Reason = Literal["unsupported", "number", "subject", "swapped", "polarity", "yes_no", "class", "language",
                 "echo", "claim"]
_DEFINED = re.compile(r"(?i)^\s*(?P<head>[^—–:;,.()]{1,60}?)(?:\s*\([^)]{0,60}\))?\s+(?:[—–-]\s|is\s+(?:a|an|the)\s|"
                      r"are\s+|является\s)")
# a sentence giving a cause claims one: the cited entry must state a cause too
_CAUSE = re.compile(r"(?i)\b(потому\s+что|так\s+как|поскольку|из-за|благодаря|вследствие|поэтому|следовательно|"
                    r"because|due\s+to|as\s+a\s+result|therefore|thanks\s+to|hence)\b")
_WHY_QUESTION = re.compile(r"(?i)\b(почему|отчего|зачем|с\s+какой\s+стати|why|how\s+come)\b")
# comparisons a claim can turn on; "more" and "than" are stopwords to the lemma checks
_COMPARATIVE = re.compile(
    r"(?i)\b(more|less|fewer|better|worse|faster|slower|higher|lower|bigger|larger|smaller|greater|cheaper|"
    r"больше|меньше|лучше|хуже|быстрее|медленнее|выше|ниже|сильнее|слабее|дешевле|дороже|точнее|шире|уже)\b")
_QUOTE_MARKS = re.compile(r"[«»„“”]")
# two lemmas of one root ("требоваться"/"требовать", "разделить"/"разделение", "хранить"/"хранение") share a
# prefix this close to the shorter one's length; "смежный"/"несмежный", "повышать"/"понижать" do not
ROOT_SLACK = 3
MIN_ROOT = 4


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


def _polarity(text: str) -> int:
    cleaned = _NOT_A_NEGATION.sub(" ", text.lower())
    negations = sum(1 for word in re.findall(r"[a-zа-яё']+", cleaned)
                    if word in _NEGATIONS or word.endswith("n't"))
    return negations % 2


def is_yes_no_question(question: str) -> bool:
    question = question.strip()
    if _YES_NO_QUESTION.search(question):
        return True
    return question.endswith("?") and bool(_CYRILLIC.search(question)) and not _QUESTION_WORD.search(question)


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


def _unit(after: str) -> str | None:
    match = _AFTER_NUMBER.match(after)
    if match is None:
        return None
    word = match.group(1)
    return next((name for name, pattern in _UNITS if pattern.match(word)), None)


def _measures(text: str) -> dict[str, set[str | None]]:
    """Each figure of a text with what it measures there (None: nothing said, or a word we do not read)."""
    found: dict[str, set[str | None]] = {}
    for match in _NUMBER.finditer(text):
        number = match.group(1).replace(",", ".")
        number = number.rstrip("0").rstrip(".") if "." in number else number
        found.setdefault(number, set()).add(_unit(text[match.end():match.end() + 24]))
    return found


def _comparatives(text: str) -> set[str]:
    return {word.lower() for word in _COMPARATIVE.findall(text)}


def _in_words(word: str, entry_words: set[str]) -> bool:
    return word in entry_words or any(same_root(word, other) for other in entry_words)


class SentenceVerifier:
    """Checks the sentences of one answer against its context entries and question."""

    def __init__(self, entries: Sequence[GlossaryEntry], question: str, answer_lang: Lang | None = None,
                 glossary: Sequence[GlossaryEntry] | None = None, about: str | None = None) -> None:
        """``glossary``: every entry, so that a sentence naming a concept outside the context is judged by
        it (without it only the context's concepts are known). ``about``: the question a follow-up follows,
        whose concepts the follow-up is about too."""
        self.entries = list(entries)
        self._glossary: ConceptNames | None = concept_names(tuple(glossary)) if glossary else None
        self.question_concepts = self._glossary.named(f"{question} {about or ''}") if self._glossary else set()
        self.answer_lang = answer_lang
        self._question = question
        self.question_numbers = _numbers(question, _ANY_NUMBER)
        self.question_words = set(content_lemmas(question))
        self.yes_no = is_yes_no_question(question)
        # "почему DDP шардирует параметры?" takes "DDP шардирует параметры" for granted, as a yes/no question
        # asks it: a sentence repeating it states it
        self.presupposes = self.yes_no or bool(_WHY_QUESTION.search(question))
        self._words = [set(content_lemmas(f"{e.term} {' '.join(e.aliases)} {e.definition}")) for e in self.entries]
        self._names = [[compact(name) for name in e.names if len(compact(name)) >= 3] for e in self.entries]
        self._name_words = [set(content_lemmas(" ".join(e.names))) for e in self.entries]
        self._numbers = [_numbers(f"{e.term} {e.definition}", _ANY_NUMBER) for e in self.entries]
        self._measures = [_measures(e.definition) for e in self.entries]  # what each figure measures
        self._question_measures = _measures(question)
        self._sentences = [[(s, set(content_lemmas(s))) for s in SENTENCE_END.split(e.definition) if s.strip()]
                           for e in self.entries]
        self._lang = [detect_lang(e.definition) for e in self.entries]
        self._question_context_concepts = self._named_concepts(compact(question))
        self._question_comparatives = _comparatives(question)
        concepts = [e.concept for e in self.entries]
        self._distinctive = []
        for index, own in enumerate(self._words):
            others = set().union(*(w for i, w in enumerate(self._words) if concepts[i] != concepts[index]))
            self._distinctive.append(own - others)

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
        lemmas = set(content_lemmas(body))
        key = compact(body)
        # support is what the sentence says beyond naming the entry: "DDP is a fully sharded method [1]"
        # names DDP's entry and says FSDP's
        scores = [self._support(lemmas - self._name_words[i], ew) for i, ew in enumerate(self._words)]
        top = max(scores, default=0.0)
        kept = [n for n in dict.fromkeys(numbers)
                if scores[n - 1] >= MIN_SUPPORT and scores[n - 1] >= RELATIVE_SUPPORT * top]
        if not kept and top >= STRONG_SUPPORT:
            kept = [scores.index(top) + 1]
        cross_language = False
        if not kept:
            kept = self._attribute_across_languages(body, key)
            if kept:
                shared = (lemmas - self._name_words[kept[0] - 1]) & self._words[kept[0] - 1]
                if len(shared) < CROSS_LANGUAGE_SHARED or scores[kept[0] - 1] < MIN_SUPPORT:
                    return SentenceCheck(body, (), "unsupported")
            cross_language = bool(kept)
        if not kept:
            return SentenceCheck(body, (), "unsupported")
        cited = tuple(kept)
        reason = (self._yes_no(body) or self._number_check(body, cited) or self._class_check(body, cited)
                  or self._subject(key, lemmas, cited) or self._glossary_subject(body, key, cited)
                  or self._claim(body, lemmas, cited) or self._echo(body, lemmas, cited, cross_language)
                  or self._polarity_check(body, lemmas, cited, cross_language))
        return SentenceCheck(body, cited, reason)

    def _echo(self, body: str, lemmas: set[str], cited: Sequence[int], cross_language: bool) -> Reason | None:
        """The sentence's support must come from what it adds to the question, not from the question's own
        words; nothing added is a restatement, which answers nothing. A yes/no question restated is an
        affirmation, which :meth:`_claim` judges ("Для обучения в FP16 требуется loss scaling"); what such a
        sentence adds must still be in the entry. A word of the entry's word family counts as the entry's
        («требуется» for «требует»)."""
        if cross_language:
            return None
        if any(self._lang[n - 1] != self._sentence_lang(body) for n in cited):  # its added words cannot be the entry's
            return None
        said = lemmas - self.question_words - set().union(*(self._name_words[n - 1] for n in cited))
        if not said:
            return None if self.yes_no else "echo"  # a restated yes/no question: the claim check judged it
        best = max(self._related_support(said, self._words[n - 1]) for n in cited)
        return "echo" if best < MIN_SUPPORT else None

    def _sentence_lang(self, body: str) -> Lang:
        """The language a sentence is written in, its concepts' names aside: «DDP (DistributedDataParallel)
        шардирует параметры модели» is Russian, though most of its letters are Latin."""
        names = set().union(*self._name_words) if self._name_words else set()
        kept = [word for word in re.findall(r"[^\W\d_]+", body) if lemma(word.lower()) not in names]
        return prevailing_lang(" ".join(kept)) if kept else prevailing_lang(body)

    def _claim(self, body: str, lemmas: set[str], cited: Sequence[int]) -> Reason | None:
        """A comparison the sentence repeats from the question ("why is GDDR faster than HBM?" → "GDDR is
        faster…") must be the cited entry's, and so must a cause it gives ("…, так как…"). A sentence
        answering a yes/no question with the question's own words affirms what it asks ("DDP шардирует
        параметры модели" to «DDP шардирует параметры модели?»), and so does one repeating what a why-question
        presupposes («почему DDP шардирует параметры?»): each content word it repeats from the question,
        beyond the concepts' names, must be in a cited entry — in that entry's language, so an English
        restatement of a Russian entry is not taken for a confirmation."""
        cited_text = " ".join(self.entries[n - 1].definition for n in cited)
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

    def _glossary_subject(self, body: str, key: str, cited: Sequence[int]) -> Reason | None:
        """The subject across the whole glossary: of the concepts the sentence names, one must be cited and
        each cited or spoken of by a cited entry, and the one it defines ("X — это …") must be cited; a
        sentence naming none is about the question's concepts, and then a cited entry must be one of them
        or speak of one (when the question names any). A figure the sentence states must belong to a
        concept it or the question names, when they name any."""
        glossary = self._glossary
        if glossary is None or any(self.entries[n - 1].category == "comparisons" for n in cited):
            return None
        cited_concepts = {self.entries[n - 1].concept for n in cited}
        cited_text = " ".join(f"{self.entries[n - 1].term} {self.entries[n - 1].definition}" for n in cited)

        def spoken_of(concept: str) -> bool:
            return concept in cited_concepts or glossary.mentioned(concept, cited_text)

        terms = glossary.named(body)  # term-like names only: "GPU" or «модель» make no sentence about them
        # about what it names: each must be cited or spoken of, and one of them cited («HBM — это более
        # доступный аналог HBM» citing GDDR's entry, which only mentions HBM, says GDDR's words of HBM)
        if terms and (not terms & cited_concepts or any(not spoken_of(concept) for concept in terms)):
            return "subject"
        # "X — это …", "X is a …": what is defined must be a cited concept, not one its entry only mentions
        # («HBM — это более доступный аналог GDDR» citing GDDR's «…более доступный аналог HBM»)
        defined = _DEFINED.match(body)
        if defined:
            head = glossary.named(defined.group("head"))
            if head and not head & cited_concepts:
                return "swapped"
        named = terms | self._named_concepts(key)
        if not named and self.question_concepts and not any(spoken_of(c) for c in self.question_concepts):
            return "subject"
        stated = _numbers(body) - self.question_numbers
        about = named | self.question_concepts | self._question_context_concepts
        if stated and about:  # naming nothing, a figure is the context's ("а в месяце?" — «30 дней»)
            owners = {self.entries[n - 1].concept for n in cited if stated & self._numbers[n - 1]}
            if owners and not owners & about:
                return "number"
        return None

    @staticmethod
    def _support(sentence_words: set[str], entry_words: set[str]) -> float:
        return len(sentence_words & entry_words) / len(sentence_words) if sentence_words else 0.0

    @staticmethod
    def _related_support(sentence_words: set[str], entry_words: set[str]) -> float:
        """Like :meth:`_support`, a word of the entry's word family counting as the entry's."""
        if not sentence_words:
            return 0.0
        return sum(_in_words(word, entry_words) for word in sentence_words) / len(sentence_words)

    def _yes_no(self, body: str) -> Reason | None:
        return "yes_no" if self.yes_no and _YES_NO_START.match(body) else None

    def _class_check(self, body: str, cited: Sequence[int]) -> Reason | None:
        """"BM25 — это нейросеть": the word a definition puts its subject under must be in a cited entry
        (a question "является ли BM25 нейросетью?" does not make it true)."""
        allowed = set().union(*(self._words[n - 1] for n in cited))
        for match in _IS_A.finditer(body):
            head = content_lemmas(match.group(1))
            if head and not set(head) & allowed:
                return "class"
        return None

    def _number_check(self, body: str, cited: Sequence[int]) -> Reason | None:
        """Every figure occurs in a cited entry or the question, measuring the same thing where both say:
        «Скидка за месяц составляет 30% [1]» citing «…месяц — ровно 30 дней» is not supported."""
        allowed = self.question_numbers.union(*(self._numbers[n - 1] for n in cited))
        if _numbers(body) - allowed:
            return "number"
        measured = [self._question_measures, *(self._measures[n - 1] for n in cited)]
        for number, units in _measures(body).items():
            if units == {None}:
                continue
            said = [found[number] for found in measured if number in found]
            if said and not any(None in units_there or units & units_there for units_there in said):
                return "number"
        return None

    def _named_concepts(self, key: str) -> set[str]:
        """Concepts whose names the sentence contains; a name inside a longer matched name of another concept
        ("attention" in "paged attention") does not count."""
        matched = [(self.entries[i].concept, name) for i, names in enumerate(self._names) for name in names
                   if name in key]
        return {concept for concept, name in matched
                if not any(other != concept and name in longer and name != longer for other, longer in matched)}

    def _subject(self, key: str, lemmas: set[str], cited: Sequence[int]) -> Reason | None:
        named = self._named_concepts(key)
        if not named:
            return None
        cited_concepts = {self.entries[n - 1].concept for n in cited}
        comparison = any(self.entries[n - 1].category == "comparisons" for n in cited)
        if not named & cited_concepts and not comparison:
            return "subject"  # about X, supported only by Y's entry
        if len(named) == 1 and not comparison:
            (subject,) = named
            own = max((len(lemmas & self._distinctive[i]) for i, e in enumerate(self.entries)
                       if e.concept == subject), default=0)
            foreign = max((len(lemmas & self._distinctive[i]) for i, e in enumerate(self.entries)
                           if e.concept != subject), default=0)
            if foreign >= SWAP_MIN_WORDS and foreign > own:
                return "swapped"  # names X but says what Y's entry says
        return None

    def _polarity_check(self, body: str, lemmas: set[str], cited: Sequence[int], cross_language: bool,
                        ) -> Reason | None:
        sentence_polarity = _polarity(body)
        sources = [pair for n in cited for pair in self._sentences[n - 1]]
        if not sources:
            return None
        if cross_language:
            # no shared words to find the restated sentence: some cited sentence must have the same polarity
            return None if any(_polarity(s) == sentence_polarity for s, _ in sources) else "polarity"
        # clause by clause: "BM25 — это нейросеть, относится к традиционным методам" negates one source
        # sentence ("BM25 не является нейросетью") and restates another
        for clause in _CLAUSE.split(body):
            words = set(content_lemmas(clause))
            if len(words) < 2:
                continue
            best_text, best_words = max(sources, key=lambda pair: len(words & pair[1]))
            overlap = len(words & best_words) / len(words)
            if overlap >= POLARITY_OVERLAP and _polarity(best_text) != _polarity(clause):
                return "polarity"
        return None

    def _attribute_across_languages(self, body: str, key: str) -> list[int]:
        """An English sentence over Russian entries (or the reverse) shares no lemmas with its source, so word
        overlap cannot show support: there, a sentence that names exactly one concept's term or alias is
        attributed to that concept's first entry — if it is in the requested answer language (a Russian
        question answered in English is a wrong answer, not a translation)."""
        named = [index for index, names in enumerate(self._names) if any(name in key for name in names)]
        if not named or len({self.entries[index].concept for index in named}) != 1:
            return []
        first = named[0]
        sentence_lang = prevailing_lang(body)
        if sentence_lang == self._lang[first]:
            return []  # same language: the lemma check has already spoken
        if self.answer_lang is not None and sentence_lang != self.answer_lang:
            return []
        return [first + 1]

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


class SentenceStream:
    """Verified text as the model writes it: a sentence is released once it is complete and has passed."""

    def __init__(self, verifier: SentenceVerifier) -> None:
        self.verifier = verifier
        self.answer = VerifiedAnswer()
        self.started = False  # the model has written something (shown or not)
        self._pending = ""
        self._shown: list[str] = []

    def feed(self, delta: str) -> str:
        self._pending += delta
        parts = SENTENCE_END.split(self._pending)
        if len(parts) == 1:
            return ""
        complete, self._pending = parts[:-1], parts[-1]
        return self._release(complete)

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return self._release([pending])

    def _release(self, sentences: Sequence[str]) -> str:
        released = []
        for sentence in sentences:
            if sentence.strip():
                shown = self.verifier.render(self.verifier.check(sentence), self.answer)
                if shown:
                    released.append(shown)
        if not released:
            return ""
        text = " ".join(released)
        prefix = " " if self._shown else ""
        self._shown.append(text)
        self.answer.text = " ".join(self._shown)
        return prefix + text

