"""The company's own rules (rental terms, idempotency keys): quoted verbatim, never paraphrased.

A small model told "stopping a placement does not pause the paid period" will still answer «Да, можно
остановить аренду и не платить» — the worst answer this product can give. Questions about a rule therefore
never reach the model: :class:`RuleBook` recognises them (``data/glossary/rules.yaml``, curated patterns over
the question), and the answer is the rule's own sentence from the glossary, with a "yes" or a "no" only
where the curator mapped that phrasing of the question to what the rule implies, or where the question
states a number the rule fixes (a week of 7 days, a month of 30).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from rapidfuzz.distance import Levenshtein

from infra.datafile import DataFile
from infra.yamlfile import YamlDocument, read_yaml, validate
from rag.glossary import Glossary, GlossaryEntry
from rag.verification.renderings import RENDERINGS_FILE, Rendering, RenderingsError, load_renderings, source_sha

RULES_FILE = Path("glossary") / "rules.yaml"
Verdict = Literal["yes", "no"]
_ALTERNATIVES = re.compile(r"(?i)(,|\s)\s*(или|либо|or)\s+[^?]{2,}\?")
# "месяц — это 31 день", "is a week 8 days": a count of days stated right next to the unit it claims for
_STATED_DAYS = {
    "week": re.compile(r"(?i)(недел\w*|\bweek)\W{0,3}(\w+\W+){0,3}?(?P<n>\d{1,3})\s*-?(дн|день|сут|days?)|"
                       r"(?P<m>\d{1,3})\s*-?(дн\w*|день|сут\w*|days?)\W{0,3}(\w+\W+){0,2}?(недел|week)"),
    "month": re.compile(r"(?i)(месяц\w*|\bmonth)\W{0,3}(\w+\W+){0,3}?(?P<n>\d{1,3})\s*-?(дн|день|сут|days?)|"
                        r"(?P<m>\d{1,3})\s*-?(дн\w*|день|сут\w*|days?)\W{0,3}(\w+\W+){0,2}?(месяц|month)"),
}


# the words questions about the rules are made of, for typo correction (inflected forms people type)
RULE_WORDS = (
    "остановить", "остановлю", "остановка", "остановки", "остановил", "остановлю", "приостановить",
    "приостановится", "приостанавливает", "платить", "заплатить", "оплатить", "оплачивать", "оплата", "оплаты",
    "оплачивается", "списание", "списывать", "вернут", "вернуть", "возврат", "деньги", "аренду", "аренда",
    "аренды", "размещение", "размещения", "неделя", "недели", "неделю", "месяц", "месяца", "месяце", "ключ",
    "ключа", "идемпотентности", "повторно", "покупки", "покупка", "операции", "конфигурации", "придётся",
    "придется", "остаток", "оставшуюся", "оставшиеся", "stop", "pause", "billing", "charged", "refund", "rental",
    "placement", "idempotency", "reuse", "purchase",
)


class RulesError(ValueError):
    """The rules file is malformed or quotes something its entry does not say."""


@dataclass(frozen=True)
class Rule:
    id: str
    entry_id: str
    quote: str
    en: str
    about: tuple[re.Pattern[str], ...]
    answer_no: tuple[re.Pattern[str], ...]
    answer_yes: tuple[re.Pattern[str], ...]
    answer_neither: tuple[re.Pattern[str], ...]
    numbers: dict[str, int]
    derived: dict[str, str]  # lang -> what follows from the rule by the price list, or {}

    def is_about(self, question: str) -> bool:
        return all(pattern.search(question) for pattern in self.about)

    def verdict(self, question: str) -> Verdict | None:
        if _ALTERNATIVES.search(question):  # "календарный месяц или ровно 30 дней?" is not a yes/no question
            return None
        by_number = self._number_verdict(question)
        if by_number is not None:
            return by_number
        if any(pattern.search(question) for pattern in self.answer_neither):
            return None  # "will I be charged twice?": the rule answers it only on a condition, quoted whole
        no = any(pattern.search(question) for pattern in self.answer_no)
        yes = any(pattern.search(question) for pattern in self.answer_yes)
        if no == yes:  # neither, or a question that asks both ways: quote the rule, say neither
            return None
        return "no" if no else "yes"

    def _number_verdict(self, question: str) -> Verdict | None:
        """"Is a month 31 days?": a count of days stated for a unit the rule fixes is right or wrong
        ("10 дней после начала месячного срока" states nothing about the month)."""
        verdicts = set()
        for unit, value in self.numbers.items():
            for match in _STATED_DAYS[unit].finditer(question):
                stated = int(match.group("n") or match.group("m"))
                verdicts.add("yes" if stated == value else "no")
        return verdicts.pop() if len(verdicts) == 1 else None  # type: ignore[return-value]


@dataclass(frozen=True)
class Caveat:
    """A seed's own disclaimer that answers citing that seed carry, verbatim (``caveats`` in rules.yaml)."""

    source: str
    quote: str  # a note of `source` in entries.yaml, word for word
    en: str  # the curator's English rendering


@dataclass(frozen=True)
class RulesDocument:
    rules: list[Rule]
    caveats: list[Caveat]


@dataclass(frozen=True)
class RuleAnswer:
    rule: Rule
    entry: GlossaryEntry
    verdict: Verdict | None
    caveats: tuple[Caveat, ...] = ()
    english: str | None = None  # the entry's curated English rendering, made from its current text


def _pattern(raw: object) -> re.Pattern[str]:
    if not isinstance(raw, str):
        raise ValueError("expected a regular expression (text)")
    try:
        return re.compile(raw, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None


Patterns = list[Annotated[re.Pattern[str], BeforeValidator(_pattern)]]


class _Derived(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ru: str
    en: str


class _RuleRow(BaseModel):
    """One rule of ``rules.yaml`` (the fields are described in the file's header)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    entry: str
    quote: str
    en: str
    about: Annotated[Patterns, Field(min_length=1)]
    answer_no: Patterns | None = None
    answer_yes: Patterns | None = None
    answer_neither: Patterns | None = None
    numbers: dict[Literal["week", "month"], int] | None = None  # the keys of _STATED_DAYS
    derived: _Derived | None = None

    @field_validator("derived", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return value or None

    def rule(self) -> Rule:
        return Rule(id=self.id, entry_id=self.entry, quote=self.quote.strip(), en=self.en.strip(),
                    about=tuple(self.about), answer_no=tuple(self.answer_no or ()),
                    answer_yes=tuple(self.answer_yes or ()), answer_neither=tuple(self.answer_neither or ()),
                    numbers={str(unit): days for unit, days in (self.numbers or {}).items()},
                    derived={} if self.derived is None else self.derived.model_dump())


class _CaveatRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    quote: str
    en: str

    def caveat(self) -> Caveat:
        return Caveat(self.source, " ".join(self.quote.split()), self.en.strip())


class _RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[_RuleRow]
    caveats: list[_CaveatRow] | None = None


def read_rules(path: Path) -> list[Rule]:
    return read_rules_document(path).rules


def read_rules_document(path: Path) -> RulesDocument:
    """Parse ``rules.yaml``; a malformed file raises :class:`RulesError` naming the file, line and field."""
    document = read_yaml(path, RulesError)
    if document.data is None:
        document = YamlDocument(document.source, {}, document.root)
    raw = validate(_RulesFile, document, RulesError)
    return RulesDocument([row.rule() for row in raw.rules], [row.caveat() for row in raw.caveats or ()])


_WORD = re.compile(r"[а-яёa-z]+")
MIN_TYPO_LEN = 5  # shorter words are too easily "corrected" into another word


class RuleBook:
    """The rules file's one reader; matches questions against the current glossary's entries."""

    def __init__(self, data_dir: Path, glossary: DataFile[Glossary]) -> None:
        self._document: DataFile[RulesDocument] = DataFile(data_dir / RULES_FILE, read_rules_document)
        self._glossary = glossary
        self._renderings: DataFile[dict[str, Rendering]] = DataFile(data_dir / RENDERINGS_FILE, _renderings_or_none)
        # the glossary and the rules document the vocabulary was made from (held, so never mistaken for a
        # later version: an id() could be reused) and their words. An edit of either file is a new value.
        self._vocabulary: tuple[Glossary | None, RulesDocument | None, frozenset[str]] = (None, None, frozenset())

    def rules(self) -> list[Rule]:
        return self._document.get().rules

    def caveats_for(self, sources: Sequence[GlossaryEntry]) -> tuple[Caveat, ...]:
        """The disclaimers of the seeds these entries come from, in the rules file's order, once each."""
        cited = {entry.source for entry in sources}
        return tuple(caveat for caveat in self._document.get().caveats if caveat.source in cited)

    def check(self) -> None:
        """Every rule quotes its entry verbatim (a glossary edit must not leave a rule quoting old words)."""
        entries = {entry.id: entry for entry in self._glossary.get()}
        for rule in self.rules():
            entry = entries.get(rule.entry_id)
            if entry is None:
                raise RulesError(f"rule {rule.id}: no glossary entry {rule.entry_id}")
            if rule.quote not in " ".join(entry.definition.split()):
                raise RulesError(f"rule {rule.id}: the quote is not in the definition of {rule.entry_id}")
        notes = self._glossary.get().notes
        for caveat in self._document.get().caveats:
            if not any(note.source == caveat.source and caveat.quote in note.text for note in notes):
                raise RulesError(f"caveat of {caveat.source}: the quote is not a note of that source in the glossary")

    def vocabulary(self) -> frozenset[str]:
        """The words of the glossary and of the rules' own vocabulary (what a typo is corrected towards)."""
        entries, document = self._glossary.get(), self._document.get()
        cached_entries, cached_document, cached = self._vocabulary
        if cached_entries is entries and cached_document is document:
            return cached
        words = {w for e in entries for w in _WORD.findall(f"{e.term} {e.definition}".lower())}
        words |= {w for rule in document.rules for w in _WORD.findall(f"{rule.quote} {rule.en}".lower())}
        words |= set(RULE_WORDS)
        vocabulary = frozenset(words)
        self._vocabulary = (entries, document, vocabulary)
        return vocabulary

    def corrected(self, question: str) -> str:
        """The question with one-letter typos of longer words fixed towards the vocabulary ("остоновить
        аренду и не плотить" → "остановить … платить"); a word already known, or with no single close
        match, stays as it is."""
        vocabulary = self.vocabulary()

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            lower = word.lower()
            if len(lower) < MIN_TYPO_LEN or lower in vocabulary:
                return word
            close = {v for v in vocabulary if abs(len(v) - len(lower)) <= 1 and Levenshtein.distance(v, lower) <= 1}
            return close.pop() if len(close) == 1 else word

        return re.sub(r"[А-Яа-яЁёA-Za-z]+", fix, question)

    def match(self, question: str) -> list[RuleAnswer]:
        """The rules a question is about, each with the yes/no it implies (None: quote only). A question
        that matches none is tried once more with its typos corrected."""
        found = self._match(question)
        if not found:
            corrected = self.corrected(question)
            if corrected != question:
                found = self._match(corrected)
        return found

    def _match(self, question: str) -> list[RuleAnswer]:
        text = " ".join(question.split())
        entries = {entry.id: entry for entry in self._glossary.get()}
        found: list[RuleAnswer] = []
        for rule in self.rules():
            entry = entries.get(rule.entry_id)
            if entry is not None and rule.is_about(text):
                found.append(RuleAnswer(rule, entry, rule.verdict(text), self.caveats_for([entry]),
                                        self._english(entry)))
        return found

    def _english(self, entry: GlossaryEntry) -> str | None:
        """The entry's curated English, when it was made from the entry's current words (an edited entry is
        shown in Russian until its rendering is reviewed)."""
        rendering = self._renderings.get().get(entry.id)
        return rendering.en if rendering is not None and rendering.source_sha == source_sha(entry.definition) else None


def _renderings_or_none(path: Path) -> dict[str, Rendering]:
    """The renderings file, or none: without it English questions get the rule in Russian with its English
    line, as before (the answerer logs the file's fault)."""
    try:
        return load_renderings(path)
    except RenderingsError:
        return {}


def single_verdict(answers: Sequence[RuleAnswer]) -> Verdict | None:
    """The one yes/no a reply may lead with: only when every matched rule that has one agrees."""
    verdicts = {answer.verdict for answer in answers if answer.verdict is not None}
    return verdicts.pop() if len(verdicts) == 1 else None
