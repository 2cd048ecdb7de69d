"""The curated glossary entries, built from the parsed seeds plus the curator's annotations.

The annotations (`annotations.yaml` next to this module) reconstruct the headwords of seed 000 (which lists
definitions only, in the alphabetical order of their English headwords, grouped by topic) and give every
entry a stable id, aliases (RU/EN names, abbreviations, transliterations, common misspellings), a category
and a concept key shared by entries of different sources that define the same thing. Keeping them in a
data file keeps the curation reproducible and reviewable in one place; the definitions themselves always
come verbatim from the seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dev.glossary.sources import (
    SOURCE_FILES,
    SOURCE_HEADLESS,
    SourceRecord,
    parse_all,
)

ANNOTATIONS = Path(__file__).resolve().with_name("annotations.yaml")

HEADLESS_FIELDS = 5  # slug | headword | category | concept | aliases
HEADED_FIELDS = 6  # source headword | slug | headword | category | concept | aliases
SAME_AS_SLUG = "="


class CurationError(ValueError):
    """The annotations do not fit the seeds (or are malformed); the message says where."""


def _seed_number(source: str) -> str:
    return source.split("_", 1)[0]


def _split(source: str, line: str, width: int) -> list[str]:
    fields = [f.strip() for f in line.split("|")]
    if len(fields) != width or not all(fields[:-1]):
        raise CurationError(f"{source}: an annotation needs {width} fields separated by '|': {line!r}")
    return fields


def load_annotations(path: Path = ANNOTATIONS) -> dict[str, list[str]]:
    """The annotation lines of each seed, as written (blank lines dropped)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CurationError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict) or set(data) != set(SOURCE_FILES):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise CurationError(f"{path}: needs one block per seed {list(SOURCE_FILES)}, found {found}")
    lines: dict[str, list[str]] = {}
    for source in SOURCE_FILES:
        block = data[source]
        if not isinstance(block, str):
            raise CurationError(f"{path}: {source} must be a block of lines ('|'), not {type(block).__name__}")
        lines[source] = [line for line in block.splitlines() if line.strip()]
    return lines


def _entry(record: SourceRecord, slug: str, term: str, category: str, concept: str,
           aliases: str) -> dict[str, Any]:
    alias_list = [a.strip() for a in aliases.split(";") if a.strip()]
    if record.headword and record.headword != term and record.headword not in alias_list:
        alias_list.insert(0, record.headword)  # the source's own spelling stays findable
    entry: dict[str, Any] = {
        "id": f"{_seed_number(record.source)}-{slug}",
        "term": term,
        "aliases": alias_list,
        "category": category,
        "concept": slug if concept == SAME_AS_SLUG else concept,
        "source": record.source,
    }
    if record.headword is not None:
        entry["source_headword"] = record.headword
    if record.section:
        entry["section"] = record.section
    entry["definition"] = record.definition
    return entry


def _headless_entries(records: list[SourceRecord], lines: list[str]) -> list[dict[str, Any]]:
    """Seed 000 has no headwords: its annotations are matched to its definitions by position."""
    if len(lines) != len(records):
        raise CurationError(
            f"{SOURCE_HEADLESS}: {len(records)} definitions but {len(lines)} annotations (they pair up in order)"
        )
    return [
        _entry(record, *_split(SOURCE_HEADLESS, line, HEADLESS_FIELDS))
        for record, line in zip(records, lines, strict=True)
    ]


def _headed_entries(source: str, records: list[SourceRecord], lines: list[str]) -> list[dict[str, Any]]:
    by_headword: dict[str, list[str]] = {}
    for line in lines:
        headword, *rest = _split(source, line, HEADED_FIELDS)
        if headword in by_headword:
            raise CurationError(f"{source}: two annotations for the headword {headword!r}")
        by_headword[headword] = rest
    missing = [r.headword for r in records if r.headword not in by_headword]
    if missing:
        raise CurationError(f"{source}: no annotation for {missing}")
    unused = sorted(set(by_headword) - {r.headword for r in records})
    if unused:
        raise CurationError(f"{source}: annotations for headwords the seed does not have: {unused}")
    return [_entry(record, *by_headword[str(record.headword)]) for record in records]


def build_entries(
    sources_dir: Path, annotations: Path = ANNOTATIONS
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The entries (in seed order) and the seeds' notes, as `entries.yaml` stores them."""
    records, notes = parse_all(sources_dir)
    lines = load_annotations(annotations)
    entries: list[dict[str, Any]] = []
    for source in SOURCE_FILES:
        found = [r for r in records if r.source == source]
        if source == SOURCE_HEADLESS:
            entries.extend(_headless_entries(found, lines[source]))
        else:
            entries.extend(_headed_entries(source, found, lines[source]))
    ids = [e["id"] for e in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CurationError(f"duplicate ids: {duplicates}")
    return entries, [{"source": n.source, "text": n.text} for n in notes]


def render(entries: list[dict[str, Any]], notes: list[dict[str, str]]) -> str:
    header = (
        "# AnchorGPU glossary: curated entries, generated by `python -m dev.glossary` from sources/ and\n"
        "# dev/glossary/annotations.yaml (edit those, then regenerate; `make test` checks this file).\n"
        "# definition: verbatim from `source` (whitespace normalised; parts of seed 003 one per line).\n"
        "# concept: shared by entries of different sources that define the same thing.\n"
    )
    body = yaml.safe_dump({"entries": entries, "notes": notes}, allow_unicode=True, sort_keys=False,
                          width=110)
    return header + body
