"""The curated glossary: entries loaded from `data/glossary/entries.yaml`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infra.datafile import DataFile

ENTRIES_FILE = Path("glossary") / "entries.yaml"
REQUIRED_FIELDS = ("id", "term", "definition", "source", "category", "concept")


class GlossaryError(ValueError):
    """The entry file is missing or malformed; the message names the entry and the field."""


@dataclass(frozen=True)
class GlossaryEntry:
    id: str
    term: str
    aliases: tuple[str, ...]
    definition: str
    source: str
    category: str
    concept: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.term, *self.aliases)

    def passage(self) -> str:
        """The text embedded and indexed for this entry: its names, then its definition."""
        return f"{self.term} ({', '.join(self.aliases)}): {self.definition}" if self.aliases else (
            f"{self.term}: {self.definition}")

    def content_hash(self) -> str:
        """Changes whenever anything indexed for the entry changes (drives idempotent ingest)."""
        payload = json.dumps([self.term, list(self.aliases), self.definition, self.source, self.category,
                              self.concept], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class GlossaryNote:
    """A seed's sentence that defines no term (an introduction, a disclaimer), kept verbatim."""

    source: str
    text: str


class Glossary(list[GlossaryEntry]):
    """The entries of ``entries.yaml`` (a list, as every reader uses it) and the seeds' notes."""

    def __init__(self, entries: list[GlossaryEntry], notes: tuple[GlossaryNote, ...] = ()) -> None:
        super().__init__(entries)
        self.notes = notes


def _entry_from(raw: dict[str, Any], position: int) -> GlossaryEntry:
    missing = [f for f in REQUIRED_FIELDS if not str(raw.get(f) or "").strip()]
    if missing:
        name = raw.get("id") or f"#{position}"
        raise GlossaryError(f"glossary entry {name}: missing {', '.join(missing)}")
    aliases = raw.get("aliases") or []
    if not isinstance(aliases, list):
        raise GlossaryError(f"glossary entry {raw['id']}: aliases must be a list")
    return GlossaryEntry(
        id=str(raw["id"]),
        term=str(raw["term"]).strip(),
        aliases=tuple(str(a).strip() for a in aliases if str(a).strip()),
        definition=str(raw["definition"]).strip(),
        source=str(raw["source"]),
        category=str(raw["category"]),
        concept=str(raw["concept"]),
    )


def load_glossary(data_dir: Path) -> Glossary:
    return read_glossary(data_dir / ENTRIES_FILE)


def glossary_file(data_dir: Path) -> DataFile[Glossary]:
    """The one reader of ``entries.yaml`` (the retriever and the /terms browser share it)."""
    return DataFile(data_dir / ENTRIES_FILE, read_glossary)


def read_glossary(path: Path) -> Glossary:
    try:
        # the C loader when PyYAML has it: the same safe subset, ~5x faster on this 300 KB file (startup)
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileNotFoundError:
        raise GlossaryError(f"glossary file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise GlossaryError(f"glossary file {path} is not valid YAML: {exc}") from None
    raw_entries = document.get("entries") if isinstance(document, dict) else None
    if not isinstance(raw_entries, list):
        raise GlossaryError(f"glossary file {path} has no 'entries' list")
    entries = [_entry_from(raw, i) for i, raw in enumerate(raw_entries)]
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise GlossaryError(f"glossary entry id {entry.id} appears twice")
        seen.add(entry.id)
    raw_notes = document.get("notes") or []
    if not isinstance(raw_notes, list) or not all(
            isinstance(n, dict) and isinstance(n.get("source"), str) and isinstance(n.get("text"), str)
            for n in raw_notes):
        raise GlossaryError(f"glossary file {path}: 'notes' must be a list of {{source, text}}")
    notes = tuple(GlossaryNote(n["source"], " ".join(n["text"].split())) for n in raw_notes)
    return Glossary(entries, notes)
