"""The message catalog: every key in both languages with the same placeholders; a broken file is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.i18n import LANGS, MESSAGES, CatalogError, Phrase, load_catalog, placeholders, t


def test_every_key_has_both_languages_with_the_same_placeholders() -> None:
    assert len(MESSAGES) > 100
    for key, texts in MESSAGES.items():
        assert set(texts) == set(LANGS), key
        assert all(texts[lang].strip() for lang in LANGS), key
        assert placeholders(texts["ru"]) == placeholders(texts["en"]), key


def test_every_key_formats_with_its_own_placeholders() -> None:
    for key, texts in MESSAGES.items():
        params = {name: "X" for name in placeholders(texts["en"])}
        for lang in LANGS:
            assert "{" not in t(key, lang, **params).replace("{{", ""), key


def test_a_key_defined_twice_or_half_translated_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("hello: {ru: Привет, en: Hi}\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("hello: {ru: Здравствуйте, en: Hello}\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"^b\.yaml, line 1: hello: already defined in a\.yaml$"):
        load_catalog(tmp_path)
    (tmp_path / "b.yaml").write_text("# farewells\nbye: {ru: Пока}\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"^b\.yaml, line 2: bye: needs exactly the texts ru, en$"):
        load_catalog(tmp_path)
    (tmp_path / "b.yaml").write_text("bye:\n  ru: Пока\n  en: [Bye]\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"^b\.yaml, line 3: bye\.en: Input should be a valid string$"):
        load_catalog(tmp_path)


def test_a_phrase_renders_in_each_language() -> None:
    phrase = Phrase.of("fit_note_gqa", kv_heads=8, heads=64)
    assert phrase.render("en") == "Grouped-query attention: 8 KV heads for 64 query heads."
    assert "8 KV-голов на 64" in phrase.render("ru")
    assert phrase.to_json() == {"code": "fit_note_gqa", "params": {"kv_heads": 8, "heads": 64}}
