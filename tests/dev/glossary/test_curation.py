"""The entries built from the seeds and the curator's annotations, and the annotation errors it reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from dev.glossary.curation import CurationError, build_entries, load_annotations
from dev.glossary.sources import SOURCE_FILES, SOURCE_HEADLESS, SOURCE_STRUCTURED, normalise_space, parse_all
from rag.glossary import load_glossary

REPO_ROOT = Path(__file__).resolve().parents[3]
DATA_DIR = REPO_ROOT / "data"
SOURCES = DATA_DIR / "glossary" / "sources"


def _write_annotations(tmp_path: Path, lines: dict[str, list[str]]) -> Path:
    """An annotation file holding `lines`, in the shipped file's layout (one block of lines per seed)."""
    target = tmp_path / "annotations.yaml"
    blocks = {source: "\n".join(found) + "\n" for source, found in lines.items()}
    target.write_text(yaml.safe_dump(blocks, allow_unicode=True, width=10_000, default_style="|"), "utf-8")
    return target


def test_the_shipped_annotations_rebuild_the_shipped_entries() -> None:
    entries, notes = build_entries(SOURCES)
    shipped = yaml.safe_load((DATA_DIR / "glossary" / "entries.yaml").read_text(encoding="utf-8"))
    assert shipped == {"entries": entries, "notes": notes}


def test_every_source_definition_is_represented_exactly_once() -> None:
    records, _ = parse_all(SOURCES)
    entries = load_glossary(DATA_DIR)
    by_text = Counter((e.source, normalise_space(e.definition)) for e in entries)
    for record in records:
        key = (record.source, normalise_space(record.definition))
        assert by_text[key] == 1, f"{record.source}: {record.definition[:60]!r} appears {by_text[key]} times"
    assert len(entries) == len(records), "an entry with no source definition was added"
    assert {e.source for e in entries} == set(SOURCE_FILES)


def test_an_entry_carries_its_annotation_and_its_source_definition() -> None:
    entries, _ = build_entries(SOURCES)
    records, _ = parse_all(SOURCES)
    slug, term, category, concept, aliases = (f.strip() for f in load_annotations()[SOURCE_HEADLESS][0].split("|"))
    first = entries[0]
    assert first["id"] == f"000-{slug}" and first["term"] == term and first["category"] == category
    assert first["concept"] == (slug if concept == "=" else concept)
    assert first["aliases"] == [a.strip() for a in aliases.split(";")]
    assert first["definition"] == records[0].definition and "source_headword" not in first


def test_a_source_headword_other_than_the_term_stays_an_alias() -> None:
    entries = {e["source_headword"]: e for e in build_entries(SOURCES)[0] if e["source"] == SOURCE_STRUCTURED}
    renamed = [e for headword, e in entries.items() if e["term"] != headword]
    assert renamed, "seed 003 has headwords like 'DiT — Diffusion Transformer' shortened to a term"
    for entry in renamed:
        assert entry["source_headword"] in entry["aliases"], entry["id"]
        assert entry["section"], entry["id"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a[SOURCE_HEADLESS].pop(), r"000_\w+\.txt: \d+ definitions but \d+ annotations \(they pair up"),
        (lambda a: a[SOURCE_STRUCTURED].pop(0), r"003_\w+\.txt: no annotation for \['DreamBooth'\]"),
        (lambda a: a[SOURCE_STRUCTURED].append("Nonesuch | x | X | basics | = | "),
         r"headwords the seed does not have: \['Nonesuch'\]"),
        (lambda a: a[SOURCE_STRUCTURED].append(a[SOURCE_STRUCTURED][0]), r"two annotations for .*'DreamBooth'"),
        (lambda a: a[SOURCE_HEADLESS].__setitem__(0, "amd-mi300x | AMD | hardware"), r"needs 5 fields"),
        (lambda a: a[SOURCE_HEADLESS].__setitem__(1, a[SOURCE_HEADLESS][0]), r"duplicate ids: \['000-amd-mi300x'\]"),
    ],
    ids=["headless-count", "missing", "unused", "twice", "fields", "duplicate-id"],
)
def test_annotations_that_do_not_fit_the_seeds_are_named(
    tmp_path: Path, change: Callable[[dict[str, list[str]]], object], message: str
) -> None:
    annotations = load_annotations()
    change(annotations)
    with pytest.raises(CurationError, match=message):
        build_entries(SOURCES, _write_annotations(tmp_path, annotations))


def test_a_malformed_annotation_file_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "annotations.yaml"
    broken.write_text("000_x.txt: [", encoding="utf-8")
    with pytest.raises(CurationError, match="not valid YAML"):
        load_annotations(broken)
    broken.write_text("000_x.txt: |\n  a | b\n", encoding="utf-8")
    with pytest.raises(CurationError, match="needs one block per seed"):
        load_annotations(broken)
    blocks: dict[str, object] = {source: "\n".join(lines) for source, lines in load_annotations().items()}
    blocks[SOURCE_STRUCTURED] = 3
    broken.write_text(yaml.safe_dump(blocks, allow_unicode=True), encoding="utf-8")
    with pytest.raises(CurationError, match=r"003_\w+\.txt must be a block of lines"):
        load_annotations(broken)
