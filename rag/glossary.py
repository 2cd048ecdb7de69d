"""The curated glossary: entries loaded from `data/glossary/entries.yaml`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from infra.datafile import DataFile
from infra.yamlfile import Text, read_yaml, validate

ENTRIES_FILE = Path("glossary") / "entries.yaml"


class GlossaryError(ValueError):
    """The entry file is missing or malformed; the message names the file, the line and the field."""


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


def _filled(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


Filled = Annotated[Text, AfterValidator(_filled)]


class _EntryRow(BaseModel):
    """One entry of ``entries.yaml`` (written by ``python -m dev.glossary``, curated by hand)."""

    model_config = ConfigDict(extra="forbid")

    id: Filled
    term: Filled
    aliases: list[Text] | None = None
    definition: Filled
    source: Filled
    category: Filled
    concept: Filled
    source_headword: Text | None = None  # where in its seed the generator found it (not read by the bot)
    section: Text | None = None

    def entry(self) -> GlossaryEntry:
        return GlossaryEntry(id=self.id, term=self.term.strip(),
                             aliases=tuple(a.strip() for a in self.aliases or () if a.strip()),
                             definition=self.definition.strip(), source=self.source, category=self.category,
                             concept=self.concept)


class _NoteRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    text: str


class _GlossaryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entries: list[_EntryRow]
    notes: list[_NoteRow] | None = None


def load_glossary(data_dir: Path) -> Glossary:
    return read_glossary(data_dir / ENTRIES_FILE)


def glossary_file(data_dir: Path) -> DataFile[Glossary]:
    """The one reader of ``entries.yaml`` (the retriever and the /terms browser share it)."""
    return DataFile(data_dir / ENTRIES_FILE, read_glossary)


def read_glossary(path: Path) -> Glossary:
    """Parse ``entries.yaml``; a malformed file raises :class:`GlossaryError` naming file, line and field."""
    try:
        # the C loader when PyYAML has it (infra.yamlfile): ~5x faster on this 300 KB file (startup)
        document = read_yaml(path, GlossaryError)
    except FileNotFoundError:
        raise GlossaryError(f"glossary file not found: {path}") from None
    raw = validate(_GlossaryFile, document, GlossaryError)
    entries = [row.entry() for row in raw.entries]
    first: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if entry.id in first:
            raise GlossaryError(f"{document.where(('entries', index, 'id'))}: glossary entry id {entry.id} appears "
                                f"twice (first at line {document.line(('entries', first[entry.id], 'id'))})")
        first[entry.id] = index
    notes = tuple(GlossaryNote(n.source, " ".join(n.text.split())) for n in raw.notes or ())
    return Glossary(entries, notes)
