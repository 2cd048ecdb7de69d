"""Lemmas kept between starts (rag/text.py): a stored table is used only when made by the same analyzer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag import text
from rag.text import content_lemmas, lemma, load_lemma_table, save_lemma_table


@pytest.fixture
def fresh_lemmas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "_LEMMAS", {})


def test_a_saved_table_gives_the_next_start_the_same_lemmas_without_parsing(
        tmp_path: Path, fresh_lemmas: None, monkeypatch: pytest.MonkeyPatch) -> None:
    sentence = "Видеокарты обучают модели быстрее, а tokenizers режут тексты"
    expected = content_lemmas(sentence)
    card = lemma("видеокарты")
    table = tmp_path / "lemmas.json"
    save_lemma_table(table)

    monkeypatch.setattr(text, "_LEMMAS", {})  # a new process
    assert load_lemma_table(table) >= len(expected)

    def no_parse(word: str) -> str:
        raise AssertionError(f"{word!r} was parsed again")

    monkeypatch.setattr(text, "_lemma", no_parse)
    assert content_lemmas(sentence) == expected and lemma("видеокарты") == card


def test_a_table_of_another_analyzer_or_a_broken_file_is_ignored(tmp_path: Path, fresh_lemmas: None) -> None:
    table = tmp_path / "lemmas.json"
    table.write_text(json.dumps({"made_by": "pymorphy3 0.0.1", "lemmas": {"видеокарты": "неверно"}}))
    assert load_lemma_table(table) == 0 and lemma("видеокарты") == text._lemma("видеокарты") != "неверно"
    table.write_text("{not json")
    assert load_lemma_table(table) == 0
    assert load_lemma_table(tmp_path / "missing.json") == 0
