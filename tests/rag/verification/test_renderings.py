"""The curated English renderings: one per glossary entry, tied to the Russian they render, same facts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rag.glossary import GlossaryEntry, load_glossary
from rag.verification.renderings import (
    RENDERINGS_FILE,
    Rendering,
    RenderingsError,
    check,
    english_negations,
    english_units,
    latin_term_problem,
    latin_terms,
    load_renderings,
    missing_latin_terms,
    negation_problem,
    number_problem,
    numbers_in,
    rendered_sentences,
    rendering_for,
    russian_negations,
    russian_units,
    sentence_problem,
    source_sha,
    unit_problem,
)
from tests.conftest import DATA_DIR

MI300X = "Datacenter-GPU AMD с 192 ГБ HBM3, конкурирующий с H100 в задачах LLM-инференса."
MI300X_EN = "AMD datacenter GPU with 192 GB of HBM3, competing with the H100 in LLM inference tasks."


def _entry(entry_id: str, definition: str) -> GlossaryEntry:
    return GlossaryEntry(id=entry_id, term=entry_id, aliases=(), definition=definition, source="test.txt",
                         category="test", concept=entry_id)


def _rendering(definition: str, en: str) -> Rendering:
    return Rendering(source_sha=source_sha(definition), en=en)


# --- the shipped file ----------------------------------------------------------------------------------------
def test_every_glossary_entry_has_a_faithful_current_rendering() -> None:
    entries = load_glossary(DATA_DIR)
    renderings = load_renderings(DATA_DIR / RENDERINGS_FILE)
    assert check(entries, renderings) == []
    assert set(renderings) == {entry.id for entry in entries}


def test_renderings_keep_the_line_structure_and_are_english() -> None:
    renderings = load_renderings(DATA_DIR / RENDERINGS_FILE)
    for entry in load_glossary(DATA_DIR):
        en = renderings[entry.id].en
        assert en.count("\n") == entry.definition.count("\n"), entry.id
        assert not any("а" <= char.lower() <= "я" or char in "ёЁ" for char in en), entry.id


def test_rendering_for_returns_the_english_text_or_none() -> None:
    renderings = {"000-amd-mi300x": _rendering(MI300X, MI300X_EN)}
    assert rendering_for("000-amd-mi300x", renderings) == MI300X_EN
    assert rendering_for("000-unknown", renderings) is None


def test_source_sha_is_the_head_of_sha256_of_the_utf8_text() -> None:
    assert source_sha("abc") == "ba7816bf8f01"
    assert source_sha("Память") != source_sha("Память ")
    assert len(source_sha(MI300X)) == 12


# --- numbers ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("russian", "english"), [
    ("в 1,5 раза", "1.5 times"),
    ("1 024 токена", "1,024 tokens"),
    ("на 680 000 часах", "on 680,000 hours"),
    ("NVLink 4.0", "NVLink 4.0"),
    ("от 4–8 бит", "4–8 bits"),
])
def test_numbers_are_compared_after_normalising_separators(russian: str, english: str) -> None:
    assert numbers_in(russian) == numbers_in(english)
    assert number_problem(russian, english) is None


def test_digits_of_names_are_not_numbers() -> None:
    assert numbers_in("H100, FP16, sm_90, int4/int8, GDDR6X, ZeRO-3") == Counter({"3": 1})


def test_a_changed_number_is_caught() -> None:
    problem = number_problem(MI300X, MI300X_EN.replace("192", "191"))
    assert problem is not None and "192" in problem and "191" in problem


def test_a_dropped_or_added_number_is_caught() -> None:
    assert number_problem("неделя — 7 дней, месяц — 30 дней", "a week is 7 days, a month is days") is not None
    assert number_problem("до 900 ГБ/с", "up to 900 GB/s in 2 directions") is not None


# --- units -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("russian", "english", "unit"), [
    ("192 ГБ", "192 GB", "GB"),
    ("до 900 ГБ/с", "up to 900 GB/s", "GB/s"),
    ("16-битный формат", "a 16-bit format", "bit"),
    ("ровно 30 дней", "exactly 30 days", "day"),
    ("680 000 часах", "680,000 hours", "hour"),
    ("<100мс", "<100 ms", "ms"),
    ("300 Вт", "300 W", "W"),
    ("в 4× быстрее", "4× faster", "×"),
    ("на 50 %", "by 50%", "%"),
])
def test_units_after_numbers_map_from_russian_to_english(russian: str, english: str, unit: str) -> None:
    assert russian_units(russian) == english_units(english) == Counter({unit: 1})
    assert unit_problem(russian, english) is None


def test_a_dropped_unit_is_caught() -> None:
    problem = unit_problem(MI300X, MI300X_EN.replace("192 GB of", "192 of"))
    assert problem is not None and "GB" in problem


def test_a_changed_unit_is_caught() -> None:
    assert unit_problem("до 900 ГБ/с", "up to 900 GB") is not None
    assert unit_problem("192 ГБ", "192 TB") is not None


def test_words_without_a_number_are_not_units() -> None:
    assert russian_units("ГБ памяти, несколько дней") == Counter()
    assert english_units("GB of memory, a few days, 2 steps") == Counter()


# --- Latin-script terms ----------------------------------------------------------------------------------
def test_latin_terms_keep_names_whole_and_split_at_hyphens() -> None:
    assert latin_terms(MI300X) == ["Datacenter", "GPU", "AMD", "HBM3", "H100", "LLM"]
    assert latin_terms("движок llama.cpp на C++, (batch, seq_len)") == ["llama.cpp", "C", "batch", "seq_len"]


def test_a_missing_latin_term_is_caught() -> None:
    rendering = MI300X_EN.replace("HBM3", "high-bandwidth memory")
    assert missing_latin_terms(MI300X, rendering) == ["HBM3"]
    problem = latin_term_problem(MI300X, rendering)
    assert problem is not None and "HBM3" in problem


def test_latin_terms_match_case_insensitively_as_whole_words_with_a_plural() -> None:
    assert missing_latin_terms("Datacenter-GPU", "datacenter GPUs") == []
    assert missing_latin_terms("порог p", "the top value") == ["p"]
    assert missing_latin_terms("FP8", "FP80") == ["FP8"]


# --- negations -------------------------------------------------------------------------------------------
def test_negations_are_counted_as_words_not_prefixes() -> None:
    assert russian_negations("Не путать: не является, без пароля, ни то ни другое, нельзя") == 6
    assert russian_negations("неразмеченные, бессерверный, некритические") == 0
    assert english_negations("not, no, without, never, can't, neither, nor, cannot") == 8
    assert english_negations("non-critical, unlabeled, serverless, know, note, nothing") == 0


def test_a_dropped_negation_is_caught() -> None:
    source = "Остановка размещения не приостанавливает оплаченный период."
    assert negation_problem(source, "Stopping a placement does not pause the paid period.") is None
    problem = negation_problem(source, "Stopping a placement pauses the paid period.")
    assert problem is not None and "source has 1" in problem and "rendering has 0" in problem


def test_an_added_negation_is_caught() -> None:
    source = "Доступ к GPU с виртуализацией CUDA-стека."
    assert negation_problem(source, "Access to a GPU without virtualization of the CUDA stack.") is not None


# --- check -----------------------------------------------------------------------------------------------
def test_check_accepts_a_faithful_current_rendering() -> None:
    assert check([_entry("000-amd-mi300x", MI300X)], {"000-amd-mi300x": _rendering(MI300X, MI300X_EN)}) == []


def test_check_reports_a_missing_rendering() -> None:
    problems = check([_entry("000-amd-mi300x", MI300X)], {})
    assert problems == ["000-amd-mi300x: no English rendering"]


def test_check_reports_a_rendering_of_an_unknown_entry() -> None:
    renderings = {"000-amd-mi300x": _rendering(MI300X, MI300X_EN), "000-gone": _rendering("x", "x")}
    assert check([_entry("000-amd-mi300x", MI300X)], renderings) == ["000-gone: rendering for an unknown entry"]


def test_check_reports_a_stale_rendering_when_the_definition_changes() -> None:
    renderings = {"000-amd-mi300x": _rendering(MI300X, MI300X_EN)}
    changed = MI300X.replace("конкурирующий", "соперничающий")
    problems = check([_entry("000-amd-mi300x", changed)], renderings)
    assert len(problems) == 1
    assert problems[0].startswith("000-amd-mi300x: stale rendering") and source_sha(changed) in problems[0]


def test_check_reports_each_differing_fact_with_the_entry_id() -> None:
    wrong = "AMD datacenter GPU with 191 of memory, not competing with the H100 in LLM inference."
    problems = check([_entry("000-amd-mi300x", MI300X)], {"000-amd-mi300x": _rendering(MI300X, wrong)})
    assert [problem.split(": ")[1].split(" ")[0] for problem in problems] == ["numbers", "units", "Latin",
                                                                             "negations"]
    assert all(problem.startswith("000-amd-mi300x: ") for problem in problems)


# --- the file format -------------------------------------------------------------------------------------
def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "renderings_en.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_reads_id_sha_and_text(tmp_path: Path) -> None:
    path = _write(tmp_path, 'renderings:\n  000-x:\n    source_sha: "0123456789ab"\n    en: " Text. "\n')
    assert load_renderings(path) == {"000-x": Rendering(source_sha="0123456789ab", en="Text.")}


@pytest.mark.parametrize(("text", "names"), [
    ('renderings:\n  000-x:\n    source_sha: "0123456789ab"\n    en: "A."\n    ru: "Б."\n',
     ["line 5: renderings.000-x.ru: unknown field"]),
    ('renderings:\n  000-x:\n    source_sha: "0123456789ab"\n', ["line 2: renderings.000-x.en: required"]),
    ('renderings:\n  000-x:\n    source_sha: "0123456789ab"\n    en: "  "\n',
     ["line 4: renderings.000-x.en: must not be blank"]),
    ('renderings:\n  000-x:\n    source_sha: "XYZ"\n    en: "A."\n', ["line 3: renderings.000-x.source_sha: "]),
    ('renderings:\n  000-x:\n    source_sha: 123456789012\n    en: "A."\n',
     ["line 3: renderings.000-x.source_sha: ", "quoted"]),
    ('renderings: {}\nnotes: []\n', ["line 2: notes: unknown field"]),
    ('entries: []\n', ["line 1: renderings: required", "entries: unknown field"]),
])
def test_a_malformed_file_names_the_file_the_line_and_the_field(tmp_path: Path, text: str,
                                                                names: list[str]) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(RenderingsError) as caught:
        load_renderings(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line "), message
    for name in names:
        assert name in message, message


def test_a_duplicate_entry_id_is_an_error_not_a_silent_overwrite(tmp_path: Path) -> None:
    text = ('renderings:\n  000-x:\n    source_sha: "0123456789ab"\n    en: "A."\n'
            '  000-x:\n    source_sha: "0123456789ab"\n    en: "B."\n')
    with pytest.raises(RenderingsError, match=r"line 5: duplicate key '000-x' \(first at line 2\)"):
        load_renderings(_write(tmp_path, text))


def test_invalid_yaml_and_a_missing_file_name_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "renderings: [\n")
    with pytest.raises(RenderingsError, match="not valid YAML") as caught:
        load_renderings(path)
    assert str(path) in str(caught.value)
    with pytest.raises(RenderingsError, match="not found"):
        load_renderings(tmp_path / "absent.yaml")


def test_a_quote_of_some_sentences_gets_their_english_and_a_rendering_keeps_the_sentences() -> None:
    source = "Первое предложение. Второе предложение.\nТретье: с числом 8."
    rendering = "The first sentence. The second sentence.\nThe third: with the number 8."
    assert rendered_sentences("Третье: с числом 8.", source, rendering) == "The third: with the number 8."
    assert rendered_sentences("Первое предложение. Третье: с числом 8.", source,
                              rendering) == "The first sentence.\nThe third: with the number 8."
    assert rendered_sentences("Не из источника.", source, rendering) is None
    assert rendered_sentences("Первое предложение.", source, "One sentence for all of it.") is None
    assert sentence_problem(source, rendering) is None
    assert sentence_problem(source, "The first and the second sentence.\nThe third: 8.") == (
        "2 sentences for the source's 3")
