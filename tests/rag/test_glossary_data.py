"""The curated entry file against the four seed sources (the seed parsers are tested in tests/dev/glossary)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from infra.settings import REPO_ROOT
from rag.glossary import GlossaryError, load_glossary

DATA_DIR = REPO_ROOT / "data"
SOURCES = DATA_DIR / "glossary" / "sources"
SOURCE_FILES = sorted(p.name for p in SOURCES.glob("*.txt"))  # 000, 002, 003, 004
STRUCTURED = next(name for name in SOURCE_FILES if name.startswith("003_"))  # parts one per line


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def test_every_seed_has_entries() -> None:
    assert len(SOURCE_FILES) == 4
    assert {e.source for e in load_glossary(DATA_DIR)} == set(SOURCE_FILES)


def test_definitions_are_verbatim_source_text() -> None:
    """Whitespace aside, each definition occurs in its source file as written (never paraphrased)."""
    entries = load_glossary(DATA_DIR)
    texts = {name: normalise_space((SOURCES / name).read_text(encoding="utf-8")) for name in SOURCE_FILES}
    for entry in entries:
        if entry.source == STRUCTURED and "\t" not in entry.definition:
            # seed 003 parts are stored one per line; each part is verbatim
            for part in entry.definition.splitlines():
                assert normalise_space(part) in texts[entry.source], (entry.id, part[:60])
        else:
            assert normalise_space(entry.definition) in texts[entry.source], entry.id


def test_every_entry_has_headword_category_and_concept() -> None:
    entries = load_glossary(DATA_DIR)
    ids = Counter(e.id for e in entries)
    assert not [i for i, n in ids.items() if n > 1]
    for entry in entries:
        assert entry.term.strip() and entry.category.strip() and entry.concept.strip(), entry.id
        assert len(entry.term) < 80, entry.id  # a headword, not a sentence
    categories = {e.category for e in entries}
    assert {"hardware", "inference", "training", "images", "speech", "basics", "infrastructure",
            "rental"} <= categories


def test_headwords_reconstructed_for_the_headless_seed() -> None:
    entries = {e.id: e for e in load_glossary(DATA_DIR)}
    mi300x = entries["000-amd-mi300x"]
    assert mi300x.term == "AMD Instinct MI300X"
    assert mi300x.definition.startswith("Datacenter-GPU AMD с 192 ГБ HBM3")
    assert entries["000-kv-cache"].definition.startswith("Кеш ключей и значений")
    assert entries["000-nvidia-h200"].definition.startswith("Обновлённый H100 с 141 ГБ")


def test_structured_entries_keep_all_parts() -> None:
    entries = {e.id: e for e in load_glossary(DATA_DIR)}
    dreambooth = entries["003-dreambooth"].definition.splitlines()
    assert [p.split(":")[0] for p in dreambooth] == ["Что это", "Для чего используется", "Простыми словами",
                                                    "Не путать с"]
    assert "Почему важно:" in entries["003-kv-cache"].definition
    table = [e for e in entries.values() if e.category == "comparisons"]
    assert len(table) == 16 and entries["003-ggml-vs-gguf"].term == "GGML и GGUF"


def test_same_concept_across_sources_shares_a_key() -> None:
    entries = load_glossary(DATA_DIR)
    kv = {e.source for e in entries if e.concept == "kv-cache"}
    assert {name[:3] for name in kv} == {"000", "002", "003"}
    assert len({e.id for e in entries if e.concept == "quantization"}) == 3
    assert len({e.id for e in entries if e.concept == "cuda"}) == 3


def test_aliases_cover_russian_english_and_transliterations() -> None:
    entries = {e.id: e for e in load_glossary(DATA_DIR)}
    kv_aliases = {a.lower() for a in entries["000-kv-cache"].aliases}
    assert {"кэш ключей и значений", "kv-кэш", "кв кэш"} <= kv_aliases


def test_malformed_entry_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "glossary").mkdir()
    target = tmp_path / "glossary" / "entries.yaml"
    target.write_text(yaml.safe_dump({"entries": [{"id": "x", "term": "", "definition": "d"}]}), "utf-8")
    with pytest.raises(GlossaryError) as caught:
        load_glossary(tmp_path)
    assert str(caught.value).startswith(f"{target}, line 4: entries[0].term: must not be empty; "), caught.value
    assert "line 2: entries[0].source: required, but missing" in str(caught.value)
    target.write_text("entries: [", "utf-8")
    with pytest.raises(GlossaryError, match="not valid YAML"):
        load_glossary(tmp_path)
    with pytest.raises(GlossaryError, match="not found"):
        load_glossary(tmp_path / "nowhere")


def test_a_broken_glossary_file_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    (tmp_path / "glossary").mkdir()
    target = tmp_path / "glossary" / "entries.yaml"
    shipped = (DATA_DIR / "glossary" / "entries.yaml").read_text(encoding="utf-8")
    lines = shipped.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("  category:"))
    lines[index] = lines[index].replace("category:", "categroy:", 1)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GlossaryError) as caught:
        load_glossary(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{target}, line {index + 1}: entries[") and "].categroy: unknown field (did you mean " \
        "'category'?)" in message and ";" not in message, message
    first = next(i for i, line in enumerate(lines) if line.startswith("- id: "))
    second = next(i for i, line in enumerate(lines) if line.startswith("- id: ") and i > first)
    lines = shipped.splitlines()
    lines[second] = lines[first]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GlossaryError, match=rf"line {second + 1}: entries\[1\]\.id: glossary entry id .* appears twice "
                                            rf"\(first at line {first + 1}\)"):
        load_glossary(tmp_path)
