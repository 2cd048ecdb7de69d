"""Parsers for the four glossary seed files, each in its own layout.

They return the raw (headword, definition) records exactly as written in the source, whitespace
normalised. `entries.yaml` is generated from them (every source definition represented exactly once), so
the parsers are the ground truth of what the sources define.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SOURCE_HEADLESS = "000_9a9371b59a12d732.txt"  # one definition per paragraph, no headwords
SOURCE_PAIRS_ANCHOR = "002_e07c44d197553e41.txt"  # headword line, definition line; a closing note
SOURCE_STRUCTURED = "003_99a85551437b3cbb.txt"  # sections, "Что это / ..." parts, a comparison table
SOURCE_PAIRS_AI = "004_3fe2b72f17c484b4.txt"  # two title lines, then headword/definition lines
SOURCE_FILES = (SOURCE_HEADLESS, SOURCE_PAIRS_ANCHOR, SOURCE_STRUCTURED, SOURCE_PAIRS_AI)

_SECTION = re.compile(r"^\d+(\.\d+)*\.\s")
_PART_LABEL = re.compile(r"^[А-ЯЁA-Z][а-яёa-z ]{2,30}:\s")


@dataclass(frozen=True)
class SourceRecord:
    source: str
    headword: str | None  # None where the source gives none (seed 000)
    definition: str
    section: str = ""


@dataclass(frozen=True)
class SourceNote:
    source: str
    text: str


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def _paragraphs(text: str) -> list[str]:
    return [p.strip("\n") for p in re.split(r"\n\s*\n", text) if p.strip()]


def _nonblank_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def parse_headless(text: str, source: str) -> list[SourceRecord]:
    """Seed 000: a title, then one definition per paragraph."""
    paragraphs = _paragraphs(text)
    return [SourceRecord(source, None, normalise_space(p)) for p in paragraphs[1:]]


def parse_pairs(text: str, source: str, title_lines: int) -> tuple[list[SourceRecord], list[SourceNote]]:
    """Seeds 002 and 004: headword line then definition line; an unpaired last line is a note."""
    lines = _nonblank_lines(text)[title_lines:]
    records = [
        SourceRecord(source, normalise_space(lines[i]), normalise_space(lines[i + 1]))
        for i in range(0, len(lines) - 1, 2)
    ]
    notes = [SourceNote(source, normalise_space(lines[-1]))] if len(lines) % 2 else []
    return records, notes


def _is_heading(paragraph: str) -> bool:
    if "\n" in paragraph or len(paragraph) > 60 or "\t" in paragraph:
        return False
    return not paragraph.rstrip().endswith((".", ":", "!", "?")) and not _PART_LABEL.match(paragraph)


def parse_structured(text: str, source: str) -> tuple[list[SourceRecord], list[SourceNote]]:
    """Seed 003: numbered sections; a short line is a headword, the paragraphs after it its parts.

    The parts ("Что это: …", "Для чего используется: …", "Простыми словами: …", "Не путать с: …" and
    unlabelled paragraphs) are kept in order, one per line. The tab-separated table of section 20.8
    gives one record per row ("A и B" → the difference).
    """
    records: list[SourceRecord] = []
    notes: list[SourceNote] = []
    section = ""
    headword: str | None = None
    parts: list[str] = []

    def flush() -> None:
        if headword is not None and parts:
            records.append(SourceRecord(source, headword, "\n".join(parts), section))

    for paragraph in _paragraphs(text)[1:]:  # the first paragraph is the document title
        first_line = paragraph.strip()
        if _SECTION.match(first_line):
            flush()
            headword, parts = None, []
            section = normalise_space(first_line)
        elif "\t" in paragraph:
            flush()
            headword, parts = None, []
            for row in paragraph.splitlines()[1:]:  # the first row is the header "Термины / Разница"
                if "\t" in row:
                    terms, difference = row.split("\t", 1)
                    records.append(
                        SourceRecord(source, normalise_space(terms), normalise_space(difference), section)
                    )
        elif _is_heading(paragraph):
            flush()
            headword, parts = normalise_space(paragraph), []
        elif headword is None:
            notes.append(SourceNote(source, normalise_space(paragraph)))  # section introductions
        else:
            parts.append(normalise_space(paragraph))
    flush()
    return records, notes


def parse_source(path: Path) -> tuple[list[SourceRecord], list[SourceNote]]:
    text = path.read_text(encoding="utf-8")
    name = path.name
    if name == SOURCE_HEADLESS:
        return parse_headless(text, name), []
    if name == SOURCE_PAIRS_ANCHOR:
        return parse_pairs(text, name, title_lines=0)
    if name == SOURCE_PAIRS_AI:
        return parse_pairs(text, name, title_lines=2)
    if name == SOURCE_STRUCTURED:
        return parse_structured(text, name)
    raise ValueError(f"unknown glossary source layout: {name}")


def parse_all(sources_dir: Path) -> tuple[list[SourceRecord], list[SourceNote]]:
    records: list[SourceRecord] = []
    notes: list[SourceNote] = []
    for name in SOURCE_FILES:
        found, found_notes = parse_source(sources_dir / name)
        records.extend(found)
        notes.extend(found_notes)
    return records, notes
