"""Curated English renderings of the glossary's Russian definitions, and the check that keeps them faithful.

A customer who writes in English gets an entry's meaning from ``data/glossary/renderings_en.yaml``: a
translation a curator wrote, marked as one, never the glossary's own words. A translation drifts silently:
the seed is re-generated and the definition changes, or a curator slips "more" for "less". :func:`check`
therefore ties each rendering to the exact Russian text it renders (``source_sha``) and compares the facts
that a wrong translation most often breaks and a program can still see: numbers, units, Latin-script terms
and negations.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from infra.yamlfile import read_yaml, validate
from rag.glossary import GlossaryEntry
from rag.verification.sentences import SENTENCE_END

RENDERINGS_FILE = Path("glossary") / "renderings_en.yaml"
SHA_LENGTH = 12


class RenderingsError(ValueError):
    """The renderings file is missing or malformed; the message names the file, the entry and the field."""


class Rendering(BaseModel):
    """One entry's English rendering and the fingerprint of the Russian definition it was written from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source_sha: str = Field(pattern=rf"^[0-9a-f]{{{SHA_LENGTH}}}$")
    en: str

    @field_validator("source_sha", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        # unquoted, "123456789012" is an int and "12345e789012" a float to YAML: the digits are lost
        if not isinstance(value, str):
            raise ValueError(f"must be a quoted string of {SHA_LENGTH} hex digits, got {value!r}")
        return value

    @field_validator("en")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class RenderingsDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    renderings: dict[str, Rendering]


def source_sha(definition: str) -> str:
    """The first hex digits of sha256 of the definition exactly as loaded (utf-8)."""
    return hashlib.sha256(definition.encode("utf-8")).hexdigest()[:SHA_LENGTH]


def load_renderings(path: Path) -> dict[str, Rendering]:
    """Entry id -> its rendering, from a renderings file (``RENDERINGS_FILE`` under the data directory); a
    malformed file (a key twice included: PyYAML would keep the last) raises :class:`RenderingsError` naming
    the file, the line and the field."""
    try:
        document = read_yaml(path, RenderingsError)
    except FileNotFoundError:
        raise RenderingsError(f"renderings file not found: {path}") from None
    return validate(RenderingsDocument, document, RenderingsError).renderings


def rendering_for(entry_id: str, renderings: Mapping[str, Rendering]) -> str | None:
    """The English rendering of an entry's definition, or None when the curators have not written one."""
    rendering = renderings.get(entry_id)
    return rendering.en if rendering is not None else None


# --- numbers -----------------------------------------------------------------------------------------------
# a number standing alone: not the digits of a name (H100, FP16, sm_90, int8) nor the tail of another number.
# Groups of three after a space or a comma are thousands ("680 000", "680,000"); any other comma is a decimal
# one ("1,5"), as in Russian.
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[ \u00a0\u202f,]\d{3}(?!\d))*(?:[.,]\d+)?")


def _normalised_number(text: str) -> str:
    digits = re.sub(r"[ \u00a0\u202f]", "", text)
    digits = re.sub(r",(?=\d{3}(?!\d))", "", digits).replace(",", ".")
    try:
        return format(Decimal(digits).normalize(), "f")
    except InvalidOperation:  # unreachable for what _NUMBER matches; keep the text rather than fail the check
        return digits


def numbers_in(text: str) -> Counter[str]:
    """The multiset of standalone numbers, normalised: "1,5" and "1.5" are one number, so are "1 024" and "1,024"."""
    return Counter(_normalised_number(match.group()) for match in _NUMBER.finditer(text))


# --- units -------------------------------------------------------------------------------------------------
# A unit counts where it follows a number ("192 ГБ", "16-битный", "<100мс"): bare words such as "память" or
# "days of the week" are not measurements. Longer spellings come first (ГБ/с before ГБ).
_RUSSIAN_UNITS: tuple[tuple[str, str], ...] = (
    (r"ТБ/с", "TB/s"), (r"ГБ/с", "GB/s"), (r"МБ/с", "MB/s"), (r"Гбит/с", "Gbit/s"),
    (r"ТБ", "TB"), (r"ГБ", "GB"), (r"МБ", "MB"), (r"КБ", "KB"), (r"кВт", "kW"), (r"Вт", "W"),
    (r"%", "%"), (r"×", "×"), (r"мс", "ms"), (r"сек|секунд\w*", "s"), (r"мин|минут\w*", "min"),
    (r"ч|час(?:а|у|ы|ов|ам|ами|ах)?", "hour"), (r"дн(?:я|и|ей|ям|ями|ях)?|день", "day"),
    (r"недел[яиюеь]\w*", "week"), (r"месяц\w*", "month"),
    (r"бит\w*", "bit"), (r"байт\w*", "byte"), (r"млрд", "billion"), (r"млн", "million"),
)
_ENGLISH_UNITS: tuple[tuple[str, str], ...] = (
    (r"TB/s", "TB/s"), (r"GB/s", "GB/s"), (r"MB/s", "MB/s"), (r"Gbit/s", "Gbit/s"),
    (r"TB", "TB"), (r"GB", "GB"), (r"MB", "MB"), (r"KB", "KB"), (r"kW", "kW"), (r"W", "W"),
    (r"%", "%"), (r"×|x", "×"), (r"ms|milliseconds?", "ms"), (r"s|sec|seconds?", "s"), (r"min|minutes?", "min"),
    (r"h|hours?", "hour"), (r"days?", "day"), (r"weeks?", "week"), (r"months?", "month"),
    (r"bits?", "bit"), (r"bytes?", "byte"), (r"billion", "billion"), (r"million", "million"),
)


def _unit_pattern(units: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    alternatives = "|".join(f"(?P<u{index}>{spelling})" for index, (spelling, _) in enumerate(units))
    return re.compile(rf"\s?-?\s?(?:{alternatives})(?![^\W\d_])")


_RUSSIAN_UNIT = _unit_pattern(_RUSSIAN_UNITS)
_ENGLISH_UNIT = _unit_pattern(_ENGLISH_UNITS)


def _units_after_numbers(text: str, pattern: re.Pattern[str], units: tuple[tuple[str, str], ...]) -> Counter[str]:
    found: Counter[str] = Counter()
    for number in _NUMBER.finditer(text):
        unit = pattern.match(text, number.end())
        if unit is not None and unit.lastgroup is not None:
            found[units[int(unit.lastgroup[1:])][1]] += 1
    return found


def russian_units(text: str) -> Counter[str]:
    """Units after numbers in a Russian text, in their English spelling (ГБ -> GB, дней -> day)."""
    return _units_after_numbers(text, _RUSSIAN_UNIT, _RUSSIAN_UNITS)


def english_units(text: str) -> Counter[str]:
    """Units after numbers in an English text, singular (GB, day, bit)."""
    return _units_after_numbers(text, _ENGLISH_UNIT, _ENGLISH_UNITS)


# --- Latin-script terms ------------------------------------------------------------------------------------
# A name such as HBM3, llama.cpp or seq_len stays whole; a hyphen splits ("Datacenter-GPU" is "datacenter GPU"
# in English, "LLM-инференса" is "LLM inference").
_LATIN_TERM = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)*")


def latin_terms(text: str) -> list[str]:
    """The distinct Latin-script terms of a text, in order of first appearance."""
    return list(dict.fromkeys(match.group() for match in _LATIN_TERM.finditer(text)))


def _appears(term: str, text: str) -> bool:
    # a term may take an English plural ("GPU" -> "GPUs", "embedding" -> "embeddings"), nothing else
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(term)}(?:e?s)?(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def missing_latin_terms(source: str, rendering: str) -> list[str]:
    """The source's Latin-script terms that the rendering does not contain (case-insensitive, whole words)."""
    return [term for term in latin_terms(source) if not _appears(term, rendering)]


# --- negations ---------------------------------------------------------------------------------------------
_RUSSIAN_NEGATION = re.compile(r"\b(?:не|нет|без|ни|нельзя)\b", re.IGNORECASE)
_ENGLISH_NEGATION = re.compile(r"\b(?:not|no|without|never|neither|nor|cannot)\b|n['’]t\b", re.IGNORECASE)


def russian_negations(text: str) -> int:
    """How many negating words (не, нет, без, ни, нельзя) a Russian text has; prefixes (неявный) are not words."""
    return len(_RUSSIAN_NEGATION.findall(text))


def english_negations(text: str) -> int:
    """How many negations (not, no, without, never, n't, neither, nor, cannot) an English text has."""
    return len(_ENGLISH_NEGATION.findall(text))


# --- the check ---------------------------------------------------------------------------------------------
def _multiset(counter: Counter[str]) -> str:
    return ", ".join(sorted(counter.elements())) or "none"


def number_problem(source: str, rendering: str) -> str | None:
    expected, found = numbers_in(source), numbers_in(rendering)
    if expected == found:
        return None
    return f"numbers differ: source has {_multiset(expected)}, rendering has {_multiset(found)}"


def unit_problem(source: str, rendering: str) -> str | None:
    expected, found = russian_units(source), english_units(rendering)
    if expected == found:
        return None
    return f"units differ: source has {_multiset(expected)}, rendering has {_multiset(found)}"


def latin_term_problem(source: str, rendering: str) -> str | None:
    missing = missing_latin_terms(source, rendering)
    return f"Latin terms missing from the rendering: {', '.join(missing)}" if missing else None


def negation_problem(source: str, rendering: str) -> str | None:
    expected, found = russian_negations(source), english_negations(rendering)
    if expected == found:
        return None
    return f"negations differ: source has {expected}, rendering has {found}"


FACT_CHECKS = (number_problem, unit_problem, latin_term_problem, negation_problem)


def sentences_of(text: str) -> list[str]:
    """A text's sentences, as the answer quotes them (rag.verification.sentences.SENTENCE_END)."""
    return [sentence.strip() for sentence in SENTENCE_END.split(text) if sentence.strip()]


def sentence_problem(source: str, rendering: str) -> str | None:
    """A rendering is sentence by sentence, so a quote of some of an entry's sentences has its English too."""
    said, rendered = len(sentences_of(source)), len(sentences_of(rendering))
    return None if said == rendered else f"{rendered} sentences for the source's {said}"


def fact_problems(source: str, rendering: str) -> list[str]:
    """What a rendering says differently from its source, as far as numbers, units, terms and negations show,
    and whether it keeps the source's sentences."""
    return [problem for fact_check in (*FACT_CHECKS, sentence_problem)
            if (problem := fact_check(source, rendering)) is not None]


def rendered_sentences(quoted: str, source: str, rendering: str) -> str | None:
    """The rendering of the quoted sentences of ``source`` (all of it, or some of its sentences), or None
    when the quote is not made of the source's sentences."""
    source_sentences, english = sentences_of(source), sentences_of(rendering)
    if len(source_sentences) != len(english):
        return None
    where = {" ".join(sentence.split()): index for index, sentence in enumerate(source_sentences)}
    picked = [where.get(" ".join(sentence.split())) for sentence in sentences_of(quoted)]
    if not picked or any(index is None for index in picked):
        return None
    return "\n".join(english[index] for index in picked if index is not None)


def check(entries: Sequence[GlossaryEntry], renderings: Mapping[str, Rendering]) -> list[str]:
    """One problem per entry without a rendering, rendering of no entry, stale rendering or differing fact."""
    problems: list[str] = []
    known = {entry.id for entry in entries}
    for entry in entries:
        rendering = renderings.get(entry.id)
        if rendering is None:
            problems.append(f"{entry.id}: no English rendering")
            continue
        expected_sha = source_sha(entry.definition)
        if rendering.source_sha != expected_sha:
            problems.append(f"{entry.id}: stale rendering (source_sha {rendering.source_sha}, definition is now "
                            f"{expected_sha}): review it against the definition, then update source_sha")
        problems.extend(f"{entry.id}: {problem}" for problem in fact_problems(entry.definition, rendering.en))
    problems.extend(f"{entry_id}: rendering for an unknown entry" for entry_id in renderings if entry_id not in known)
    return problems
