"""Faithfulness of generated answers on the labelled set ``tests/eval/faithfulness.yaml`` (no model here).

``dev.eval.retrieval`` measures retrieval (did the right entry come first); this module measures what the
answer *says*: does it state the facts the glossary/catalog support, does it make a claim the sources
contradict (the swapped or negated version of a fact), does it put numbers in a sentence that no source
contains, did it refuse when it should and answer yes/no the right way round. Pure: no model, no I/O
beyond reading the set file.

The set (one YAML document, ``items:`` a list; the file's header comment is the full reference)::

    - id: ru-rental-stop-week          # unique, stable: <lang>-<kind>-<topic>
      question: можно ли остановить аренду и не платить за оставшуюся неделю?
      lang: ru                         # ru | en
      kind: rental                     # one of KINDS
      history: ["previous question"]   # optional: earlier user turns a follow-up depends on
      expect: answer                   # answer | refuse
      entries: [002-rental-term]       # glossary entry ids or concept keys that support the answer
      catalog: [term.week]             # optional catalog refs (below)
      must_state:                      # every group must match; a group = alternative patterns
        - ['не приостанавлива', 'оплач\\w+ (\\w+ )?(полностью|целиком)']
      must_not: ['^\\W*да\\b']         # claims a correct answer never makes (swapped / negated facts)
      yes_no: no                       # yes | no | null (default)
      part: probe                      # optional: the part of the set the item belongs to (default: core)

Matching. The answer is folded (:func:`fold`: lower case, ``ё``→``е``, markdown emphasis, list markers
and ``[1]`` citation markers removed, a line break ends a clause, white space collapsed); every pattern is
a Python regex (``ё``→``е``, macros expanded by :func:`expand`) searched case-insensitively anywhere in it,
``^`` being the start of the answer. Two macros keep negations out of ``must_not`` patterns:
``<same>`` is one character of the same clause that does not begin a negation (не, нет, без, not, n't...)
or a contrast (а, но, в отличие, while, whereas...), so ``'ddp<same>{0,60}объединя'`` matches
"DDP объединяет память" but not "DDP не объединяет память" nor "FSDP делит, а DDP ... не объединяет";
``<start>`` is the start of a clause (the answer, after ``. ! ? ; :``, after а/но/but/while/whereas), so
``'<start>lora<same>{0,60}4-?\\s?бит'`` catches "LoRA — это fine-tuning поверх 4-битной модели" but not
"QLoRA — это LoRA поверх 4-битной модели". Patterns are heuristics written from the entry text named in
``entries``; the tests check them against that text, a correct answer for every answerable item and a
swapped or negated answer for most of them.

Catalog refs. ``<gpu id>`` (every fact of that GPU), ``<gpu id>.<field>`` (``memory_gb``, ``memory_gib``,
``bandwidth_gb_s``, ``bf16_tflops``, ``fp8_tflops``, ``interconnect``), ``price.<gpu id>.<on_demand|spot>``,
``price.<gpu id>.<day|week|month>`` (one term's price), ``price.<gpu id>.discount.<day|week|month>``,
``term.<day|week|month>`` (hours and days). The caller passes the fact table, ref → a text carrying the
numbers (``dev.eval.catalog_facts.catalog_facts`` builds it from ``gpu.data.GpuData``, the files' one
owner; ``rag`` does not import ``gpu``).

Verdict. ``answered``: every must_state group matched and the answer is not a refusal (for a refusal item:
it refused). ``contradicted``: a must_not matched, or a yes/no item was answered the wrong way round (the
opening word, :func:`detect_yes_no`). ``refused``: ``status == "out_of_scope"``, an empty answer, or a
refusal phrase (:data:`REFUSAL_TEXT`); a refusal claims nothing, so it is never contradicted nor
unsupported. ``yes_no_correct``: the opening word when there is one, otherwise "answered and not
contradicted". ``correct``: all of it at once.

Unsupported numbers (the simple check). The answer is split into sentences; in each sentence every number
that is a quantity is looked for in the allowed text: the terms, aliases and definitions of ``sources``,
the facts of the item's own catalog refs, the question and its history. A number is a quantity when it is
not glued to a letter before it (``H100``, ``FP16``, ``ZeRO-3``, ``sm_90`` are names) and it is at least 10,
has a fractional part, or is followed by a unit (``ГБ``, ``GB``, ``%``, ``дней``, ``бит``...); small counts
("2 подхода") and list markers are left alone. A number is supported when its value, or that value times
or divided by 1000 (GB/s ↔ TB/s), occurs in the allowed text; ``3,35`` and ``3 350`` are read both ways
(decimal comma or thousands separator); a figure written with fewer decimals than its fact is that fact
rounded (``2,04 ТБ/с`` of 2 039 GB/s), and a ratio of two supported figures of the same sentence is supported
(``×1,2`` beside ``1,01 против 0,86``). A sentence with one unsupported quantity makes the answer
``unsupported``. Known limits: any other derived figure ("141 − 80 = 61 GB more") counts as unsupported, and a
number that occurs anywhere in the allowed text supports the sentence even when attached to another fact
(that case is what ``must_not`` is for).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, model_validator

from infra.yamlfile import Text, read_yaml, validate

FAITHFULNESS_FILE = Path(__file__).resolve().parents[2] / "tests" / "eval" / "faithfulness.yaml"

KINDS = ("definition", "comparison", "number", "yes_no", "rental", "follow_up", "paraphrase", "typo",
         "translit", "out_of_scope")
LANGS = ("ru", "en")
PARTS = ("core", "probe")
EXPECTS = ("answer", "refuse")
# Items about the company's own rules: counted apart, since a wrong answer there costs a customer money.
RENTAL_CONCEPTS = frozenset({"rental-term", "idempotency-key", "002-rental-term", "002-idempotency-key"})
# The answerer's statuses that are a refusal by construction (rag.answering.events.AnswerStatus "out_of_scope").
REFUSAL_STATUSES = frozenset({"out_of_scope"})
# A refusal written by the model itself (or the front's out-of-scope phrase, in either language).
REFUSAL_TEXT = re.compile(
    r"в глоссарии (ответа )?нет|нет в глоссарии|в глоссарии не (найден|нашел|нашлось|описан|указан)|"
    r"не могу (на это )?ответить|отвечаю только на вопросы|не знаю|нет (такой|этой) информации|"
    r"glossary has nothing|not in the glossary|glossary does(n't| not) (cover|contain|say)|"
    r"i only answer questions|i (can(no|')t|cannot) answer|i don't know|no information (on|about)",
    re.IGNORECASE,
)
# Pattern macros. <same>: one character of the same clause that does not start a negation or a contrast,
# so "X<same>{0,60}Y" means "X ... Y, said positively, in one clause". <start>: the start of a clause.
SAME = "<same>"
SAME_RE = (r"(?:(?!\b(?:не|нет|ни|без|нельзя|а|но|однако|тогда|отличие|not|no|never|without|cannot|but|"
           r"while|whereas|unlike|instead)\b|n't)[^.!?;])")
START = "<start>"
# Not after "и"/"and": "GGML и GGUF: GGML — библиотека" must not read as "GGUF ... библиотека".
START_RE = (r"(?:^|(?<=[.!?;:]\s)|(?<=\bа\s)|(?<=\bно\s)|(?<=\bbut\s)|(?<=\bwhile\s)|(?<=\bwhereas\s))")
YES = frozenset({"да", "yes", "yeah", "yep", "конечно"})
NO = frozenset({"нет", "no", "нельзя", "nope"})

Expect = Literal["answer", "refuse"]
YesNo = Literal["yes", "no"]


class FaithfulnessSetError(ValueError):
    """The set file is missing or malformed; the message names the file, the line and the field."""


@dataclass(frozen=True)
class Claim:
    """One pattern of the set: as written there (for reports) and compiled."""

    text: str
    regex: re.Pattern[str]

    def found_in(self, folded_answer: str) -> bool:
        return self.regex.search(folded_answer) is not None


@dataclass(frozen=True)
class FaithfulnessItem:
    id: str
    question: str
    lang: str
    kind: str
    expect: Expect
    entries: tuple[str, ...]
    catalog: tuple[str, ...]
    must_state: tuple[tuple[Claim, ...], ...]
    must_not: tuple[Claim, ...]
    yes_no: YesNo | None
    history: tuple[str, ...] = ()
    part: str = "core"

    @property
    def rental(self) -> bool:
        return self.kind == "rental" or bool(RENTAL_CONCEPTS.intersection(self.entries))


@dataclass(frozen=True)
class FaithfulnessSet:
    items: list[FaithfulnessItem]

    def by_id(self, item_id: str) -> FaithfulnessItem:
        return next(i for i in self.items if i.id == item_id)


# ------------------------------------------------------------------ loading


def fold(text: str) -> str:
    """What every pattern is searched in (see the module docstring)."""
    text = re.sub(r"\[\d+\]", " ", text)
    text = re.sub(r"(?m)^\s*(?:[-*•]|\d+[.)])\s+", "", text)  # list markers
    text = re.sub(r"\*{1,3}|`|(?<!\w)_{1,2}|_{1,2}(?!\w)", "", text)  # emphasis, not sm_90
    text = re.sub(r"([^.!?;:\s])[ \t]*\n\s*", r"\1. ", text)  # a line break ends a clause
    return re.sub(r"\s+", " ", text.lower().replace("ё", "е")).strip()


def expand(pattern: str) -> str:
    """A set pattern as a Python regex: ``ё`` folded to ``е``, the ``<same>``/``<start>`` macros expanded."""
    return pattern.replace("ё", "е").replace("Ё", "Е").replace(SAME, SAME_RE).replace(START, START_RE)


def _claim(pattern: Any) -> Claim:
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError(f"a pattern must be a non-empty string, got {pattern!r}")
    try:
        return Claim(pattern, re.compile(expand(pattern), re.IGNORECASE))
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None


def _filled(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text.strip()


def _one_of(allowed: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, got {value!r}")
        return value
    return check


def _spelled(value: Any) -> Any:
    # YAML 1.1 reads a bare yes/no as a boolean: accept both spellings.
    return ("yes" if value else "no") if isinstance(value, bool) else value


Pattern = Annotated[Claim, PlainValidator(_claim)]
Filled = Annotated[Text, AfterValidator(_filled)]
Strings = list[Annotated[str, AfterValidator(_filled)]]


class _Item(BaseModel):
    """One item of the set (its fields are described in the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: Filled
    question: Filled
    lang: Annotated[Text, AfterValidator(_one_of(LANGS))]
    kind: Annotated[Text, AfterValidator(_one_of(KINDS))]
    history: Strings | None = None
    expect: Annotated[Text, AfterValidator(_one_of(EXPECTS))]
    entries: Strings | None = None
    catalog: Strings | None = None
    must_state: list[Annotated[list[Pattern], Field(min_length=1)]] | None = None
    must_not: list[Pattern] | None = None
    yes_no: Annotated[YesNo | None, BeforeValidator(_spelled)] = None
    # the part of the set: "core" (written with the rules), or a probe of new questions merged in later and
    # kept apart in the report (by_part) so that its floors and the core's are each their own
    part: Annotated[Text, AfterValidator(_one_of(PARTS))] = "core"

    @model_validator(mode="after")
    def _answerable_or_refused(self) -> _Item:
        if self.expect == "answer" and not (self.entries or self.catalog):
            raise ValueError("an answerable item needs entries or catalog refs")
        if self.expect == "answer" and not self.must_state:
            raise ValueError("an answerable item needs must_state")
        if self.expect == "refuse" and (self.must_state or self.entries):
            raise ValueError("a refusal item has no must_state and no entries")
        return self

    def item(self) -> FaithfulnessItem:
        return FaithfulnessItem(
            id=self.id, question=self.question, lang=self.lang, kind=self.kind,
            expect="answer" if self.expect == "answer" else "refuse", entries=tuple(self.entries or ()),
            catalog=tuple(self.catalog or ()), must_state=tuple(tuple(group) for group in self.must_state or ()),
            must_not=tuple(self.must_not or ()), yes_no=self.yes_no, history=tuple(self.history or ()),
            part=self.part)


class _FaithfulnessFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[_Item]


def load_faithfulness_set(path: Path = FAITHFULNESS_FILE) -> FaithfulnessSet:
    """The set; a malformed item raises :class:`FaithfulnessSetError` naming the file, the line and the field."""
    try:
        document = read_yaml(path, FaithfulnessSetError)
    except FileNotFoundError:
        raise FaithfulnessSetError(f"faithfulness set not found: {path}") from None
    items = [raw.item() for raw in validate(_FaithfulnessFile, document, FaithfulnessSetError).items]
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.id in first:
            raise FaithfulnessSetError(f"{document.where(('items', index, 'id'))}: item id {item.id} appears twice "
                                       f"(first at line {document.line(('items', first[item.id], 'id'))})")
        first[item.id] = index
    return FaithfulnessSet(items)


def unknown_references(eval_set: FaithfulnessSet, known_entries: Iterable[str],
                       known_catalog: Iterable[str]) -> list[str]:
    """Every entry id / concept key and catalog ref the set names that the data does not have."""
    entries, catalog = set(known_entries), set(known_catalog)
    gpu_ids = {ref.split(".", 1)[0] for ref in catalog if not ref.startswith(("price.", "term."))}
    problems = []
    for item in eval_set.items:
        problems += [f"{item.id}: entry {e}" for e in item.entries if e not in entries]
        problems += [f"{item.id}: catalog {c}" for c in item.catalog if c not in catalog and c not in gpu_ids]
    return problems


# ------------------------------------------------------------------ scoring


class SourceLike(Protocol):
    """What scoring needs of :class:`rag.glossary.GlossaryEntry`."""

    @property
    def term(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...

    @property
    def definition(self) -> str: ...


@dataclass(frozen=True)
class Verdict:
    item_id: str
    kind: str
    lang: str
    rental: bool
    expect: Expect
    refused: bool
    answered: bool                 # states every must_state group (answer items) / refused (refuse items)
    contradicted: bool             # a must_not matched, or yes/no said the wrong way round
    unsupported: bool              # a sentence carries a number found in no source
    refused_correctly: bool        # refused exactly when the item expects a refusal
    yes_no_correct: bool | None    # None: not a yes/no item
    part: str = "core"
    missing: tuple[str, ...] = ()                 # first pattern of each unmet must_state group
    violations: tuple[str, ...] = ()              # the must_not patterns that matched
    unsupported_sentences: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        """What a customer can trust: the right decision, the facts, nothing false, no invented number."""
        return (self.refused_correctly and self.answered and not self.contradicted and not self.unsupported
                and self.yes_no_correct is not False)


_SENTENCE = re.compile(r"(?<=[.!?…;])\s+|\n+")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u202f,]\d{3})+|\d+(?:[.,]\d+)?)(?![\d])")
_UNIT = re.compile(
    r"\s?(%|гб|gb|гиб|gib|тб|tb|мб|mb|гбит|gbit|tflops|тфлопс|флопс|flops|бит|bit|байт|byte|дн|день|дня|"
    r"day|час|ч\b|h\b|hour|недел|week|месяц|month|мс|ms|\$|usd|доллар|вт|w\b|млрд|billion|b\b|млн|million)",
    re.IGNORECASE,
)
_GLUED_LETTER = re.compile(r"[^\W\d]$")


def _values(token: str) -> set[Decimal]:
    """Every reading of a number token: decimal comma or thousands separator, as written."""
    readings = {re.sub(r"[ \u00a0\u202f,]", "", token), token.replace(",", ".")}
    if " " in token or "\u00a0" in token or "\u202f" in token:
        readings |= set(re.split(r"[ \u00a0\u202f]", token))
    values = set()
    for reading in readings:
        try:
            values.add(Decimal(reading).normalize())
        except InvalidOperation:
            continue
    return values


def _quantities(sentence: str) -> list[tuple[str, set[Decimal]]]:
    found = []
    for match in _NUMBER.finditer(sentence):
        before = sentence[:match.start()]
        if _GLUED_LETTER.search(before) or (before.endswith("-") and _GLUED_LETTER.search(before[:-1])):
            continue  # H100, FP16, ZeRO-3, sm_90: part of a name
        token = match.group(1)
        values = _values(token)
        has_unit = bool(_UNIT.match(sentence, match.end()))
        if not has_unit and all(v == v.to_integral_value() and v < 10 for v in values):
            continue
        found.append((token, values))
    return found


def _allowed_numbers(texts: Iterable[str]) -> set[Decimal]:
    allowed: set[Decimal] = set()
    for text in texts:
        for match in _NUMBER.finditer(text):
            allowed |= _values(match.group(1))
        # names count too: "RTX 4090" supports 4090, "NVLink 4" supports 4
        allowed |= {Decimal(d).normalize() for d in re.findall(r"\d+", text)}
    return allowed


def _rounds_to(value: Decimal, allowed: set[Decimal]) -> bool:
    """``value`` is a fact shown at the precision it is written with: 2.04 (TB/s) of 2,039 GB/s, 0.86 of 864.
    At least two significant digits, so a lone "2" is never read as 2.4 rounded."""
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int) or exponent >= 0 or len(value.as_tuple().digits) < 2:
        return False
    step = Decimal(1).scaleb(exponent)
    return any(fact.quantize(step) == value for fact in allowed if fact.adjusted() <= value.adjusted() + 1)


def _supported(values: set[Decimal], allowed: set[Decimal]) -> bool:
    thousand = Decimal(1000)
    return any(v in allowed or (v * thousand).normalize() in allowed or (v / thousand).normalize() in allowed
               or _rounds_to(v, allowed) or _rounds_to(v, {(a / thousand) for a in allowed})
               for v in values)


def _ratios(sentence: str, allowed: set[Decimal]) -> set[Decimal]:
    """The ratios of two supported figures of one sentence ("1,01 против 0,86 ТБ/с (×1,2)"): a comparison
    states them beside the figures they come from, so a ratio of two others is still unsupported."""
    shown = [v for _, values in _quantities(sentence) if _supported(values, allowed) for v in values if v > 0]
    return {(a / b) for a in shown for b in shown if a > b}


def unsupported_sentences(answer_text: str, allowed_texts: Iterable[str]) -> list[str]:
    allowed = _allowed_numbers(allowed_texts)
    text = re.sub(r"\[\d+\]", " ", answer_text)
    text = re.sub(r"(?m)^\s*(\d+[.)]|[-*•])\s+", "", text)  # list markers are not quantities
    return [" ".join(sentence.split()) for sentence in _SENTENCE.split(text)
            if any(not _supported(values, allowed | _ratios(sentence, allowed)) for _, values in _quantities(sentence))]


def facts_for(item: FaithfulnessItem, catalog: Mapping[str, str]) -> list[str]:
    """The catalog facts an item's answer may use: each ref, a bare GPU id meaning all of its facts."""
    facts = []
    for ref in item.catalog:
        facts += [text for key, text in catalog.items() if key == ref or key.startswith(ref + ".")]
    return facts


def detect_yes_no(answer_text: str) -> YesNo | None:
    """The polarity an answer opens with ("Да, ...", "No - ..."); None when it opens otherwise."""
    first = re.match(r"\W*(\w+)", fold(answer_text))
    if first is None:
        return None
    word = first.group(1)
    return "yes" if word in YES else "no" if word in NO else None


def score(item: FaithfulnessItem, answer_text: str, sources: Sequence[SourceLike], status: str, *,
          catalog: Mapping[str, str] | None = None) -> Verdict:
    """One answer against its item. ``sources``: the entries the answer was given (``Answer.sources``);
    ``status``: ``Answer.status``; ``catalog``: the fact table (see the module docstring)."""
    folded = fold(answer_text)
    # the glossary's own words are an answer, also under a notice that one side of a comparison is missing
    refused = status in REFUSAL_STATUSES or not folded or (status != "extractive" and bool(REFUSAL_TEXT.search(folded)))
    violations = tuple(c.text for c in item.must_not if c.found_in(folded)) if not refused else ()
    missing = tuple(group[0].text for group in item.must_state if not any(c.found_in(folded) for c in group))
    said = detect_yes_no(answer_text) if not refused else None
    wrong_way = item.yes_no is not None and said is not None and said != item.yes_no
    contradicted = bool(violations) or wrong_way
    answered = refused if item.expect == "refuse" else not refused and not missing
    yes_no_correct: bool | None = None
    if item.yes_no is not None:
        yes_no_correct = (said == item.yes_no) if said is not None else (answered and not contradicted)
    allowed = [text for s in sources for text in (s.term, *s.aliases, s.definition)]
    allowed += [item.question, *item.history, *facts_for(item, catalog or {})]
    bad = tuple(unsupported_sentences(answer_text, allowed)) if not refused else ()
    return Verdict(
        item_id=item.id, kind=item.kind, lang=item.lang, rental=item.rental, expect=item.expect,
        refused=refused, answered=answered, contradicted=contradicted, unsupported=bool(bad),
        refused_correctly=refused == (item.expect == "refuse"), yes_no_correct=yes_no_correct, part=item.part,
        missing=missing, violations=violations, unsupported_sentences=bad,
    )


# ------------------------------------------------------------------ aggregate


@dataclass(frozen=True)
class Shares:
    n: int
    answered: float          # stated the facts (or refused where expected), over all items
    correct: float           # Verdict.correct, over all items
    contradicted: float      # over the items that expect an answer
    unsupported: float       # over the items that expect an answer
    refused_correctly: float  # over all items

    def as_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "answered": round(self.answered, 4), "correct": round(self.correct, 4),
                "contradicted": round(self.contradicted, 4), "unsupported": round(self.unsupported, 4),
                "refused_correctly": round(self.refused_correctly, 4)}


def _shares(verdicts: Sequence[Verdict]) -> Shares:
    n = len(verdicts)
    answerable = [v for v in verdicts if v.expect == "answer"]
    m = max(1, len(answerable))
    return Shares(
        n=n,
        answered=sum(v.answered for v in verdicts) / max(1, n),
        correct=sum(v.correct for v in verdicts) / max(1, n),
        contradicted=sum(v.contradicted for v in answerable) / m,
        unsupported=sum(v.unsupported for v in answerable) / m,
        refused_correctly=sum(v.refused_correctly for v in verdicts) / max(1, n),
    )


@dataclass(frozen=True)
class Summary:
    overall: Shares
    rental_correct: float          # share of rental-rule items answered correctly (Verdict.correct)
    yes_no_correct: float          # share of yes/no items answered the right way round
    refusal_recall: float          # out-of-scope items refused
    false_refusals: float          # answerable items refused
    by_kind: dict[str, Shares] = field(default_factory=dict)
    by_lang: dict[str, Shares] = field(default_factory=dict)
    by_part: dict[str, Summary] = field(default_factory=dict)  # only when the set has more than one part

    def as_dict(self) -> dict[str, Any]:
        parts = {"by_part": {k: s.as_dict() for k, s in sorted(self.by_part.items())}} if self.by_part else {}
        return {
            **self.overall.as_dict(),
            "rental_correct": round(self.rental_correct, 4),
            "yes_no_correct": round(self.yes_no_correct, 4),
            "refusal_recall": round(self.refusal_recall, 4),
            "false_refusals": round(self.false_refusals, 4),
            "by_kind": {k: s.as_dict() for k, s in sorted(self.by_kind.items())},
            "by_lang": {k: s.as_dict() for k, s in sorted(self.by_lang.items())},
            **parts,
        }


def summarise(verdicts: Sequence[Verdict]) -> Summary:
    """The shares the benchmark prints; an empty group counts as 0.0."""
    def share(flags: list[bool]) -> float:
        return sum(flags) / len(flags) if flags else 0.0

    kinds: dict[str, list[Verdict]] = defaultdict(list)
    langs: dict[str, list[Verdict]] = defaultdict(list)
    parts: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        kinds[verdict.kind].append(verdict)
        langs[verdict.lang].append(verdict)
        parts[verdict.part].append(verdict)
    return Summary(
        overall=_shares(verdicts),
        rental_correct=share([v.correct for v in verdicts if v.rental]),
        yes_no_correct=share([v.yes_no_correct is True for v in verdicts if v.yes_no_correct is not None]),
        refusal_recall=share([v.refused for v in verdicts if v.expect == "refuse"]),
        false_refusals=share([v.refused for v in verdicts if v.expect == "answer"]),
        by_kind={k: _shares(vs) for k, vs in kinds.items()},
        by_lang={k: _shares(vs) for k, vs in langs.items()},
        by_part={k: summarise(vs) for k, vs in parts.items()} if len(parts) > 1 else {},
    )
