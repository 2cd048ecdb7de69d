"""The seed parsers, one layout each: small inputs written here, then the shipped seeds themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from dev.glossary.sources import (
    SOURCE_FILES,
    SOURCE_HEADLESS,
    SOURCE_PAIRS_AI,
    SOURCE_PAIRS_ANCHOR,
    SourceNote,
    SourceRecord,
    parse_all,
    parse_headless,
    parse_pairs,
    parse_source,
    parse_structured,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
SOURCES = REPO_ROOT / "data" / "glossary" / "sources"
SHARED_SEEDS = REPO_ROOT.parent / "shared" / "seeds"

STRUCTURED = """Словарь терминов

1. Модели изображений

Этот раздел посвящён генерации
изображений.

DreamBooth

Что это: метод персонализации,
позволяющий обучить модель.

Не путать с: LoRA.

Второй абзац без метки.

UNet

Что это: архитектура.

1.2. Сравнение

Термины\tРазница
AI и ML\tAI шире;   ML — подход.
LLM и GPT\tGPT — семейство.
"""


def test_headless_skips_the_title_and_normalises_whitespace() -> None:
    text = "Глоссарий\n\nПервое  определение,\nна двух строках.\n\n\n  Второе.\n"
    assert parse_headless(text, "s") == [
        SourceRecord("s", None, "Первое определение, на двух строках."),
        SourceRecord("s", None, "Второе."),
    ]


def test_pairs_after_the_title_lines_and_an_unpaired_last_line_is_a_note() -> None:
    text = "Заголовок\nПодзаголовок\n\nVRAM\nВидеопамять  GPU.\nKV-кэш\nКэш ключей.\nОговорка в конце.\n"
    records, notes = parse_pairs(text, "s", title_lines=2)
    assert records == [SourceRecord("s", "VRAM", "Видеопамять GPU."), SourceRecord("s", "KV-кэш", "Кэш ключей.")]
    assert notes == [SourceNote("s", "Оговорка в конце.")]
    assert parse_pairs("A\nопределение A\n", "s", title_lines=0) == ([SourceRecord("s", "A", "определение A")], [])


def test_structured_keeps_parts_in_order_sections_and_table_rows() -> None:
    records, notes = parse_structured(STRUCTURED, "s")
    assert records == [
        SourceRecord("s", "DreamBooth", "Что это: метод персонализации, позволяющий обучить модель.\n"
                     "Не путать с: LoRA.\nВторой абзац без метки.", "1. Модели изображений"),
        SourceRecord("s", "UNet", "Что это: архитектура.", "1. Модели изображений"),
        SourceRecord("s", "AI и ML", "AI шире; ML — подход.", "1.2. Сравнение"),
        SourceRecord("s", "LLM и GPT", "GPT — семейство.", "1.2. Сравнение"),
    ]
    assert notes == [SourceNote("s", "Этот раздел посвящён генерации изображений.")]


def test_a_file_of_unknown_layout_is_refused(tmp_path: Path) -> None:
    stray = tmp_path / "005_unknown.txt"
    stray.write_text("x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown glossary source layout: 005_unknown\.txt"):
        parse_source(stray)


def test_sources_are_verbatim_copies_of_the_seeds() -> None:
    if not SHARED_SEEDS.is_dir():
        pytest.skip("the shared seed folder is not present on this machine")
    for name in SOURCE_FILES:
        assert (SOURCES / name).read_bytes() == (SHARED_SEEDS / name).read_bytes(), name


def test_the_shipped_seeds_parse_in_their_layouts() -> None:
    records, notes = parse_all(SOURCES)
    assert {r.source for r in records} == set(SOURCE_FILES)
    assert all(r.definition.strip() for r in records)
    # only seed 000 lacks headwords; every other record names its term
    assert {r.source for r in records if r.headword is None} == {SOURCE_HEADLESS}
    # seed 002's closing disclaimer is a note, not the definition of a last headword
    closing = (SOURCES / SOURCE_PAIRS_ANCHOR).read_text(encoding="utf-8").strip().splitlines()[-1]
    assert SourceNote(SOURCE_PAIRS_ANCHOR, " ".join(closing.split())) in notes
    assert all(" ".join(closing.split()) not in r.definition for r in records)
    # seed 004 opens with two title lines, so its first record is a real term, not the title
    first_004 = next(r for r in records if r.source == SOURCE_PAIRS_AI)
    title = (SOURCES / SOURCE_PAIRS_AI).read_text(encoding="utf-8").splitlines()[:2]
    assert first_004.headword not in title and first_004.definition not in title
