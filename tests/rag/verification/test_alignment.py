"""A generated sentence aligned with one source sentence: each mistake class changes what aligns."""

from __future__ import annotations

import pytest

from rag.verification.alignment import align, read

SOURCE_RU = "Параллельная вычислительная платформа NVIDIA для программирования GPU, стандарт в ML."
SOURCE_EN = "A larger batch can increase computational efficiency, but requires more memory."


@pytest.mark.parametrize(("sentence", "problem"), [
    (SOURCE_RU, None),
    ("Стандарт в ML, параллельная вычислительная платформа NVIDIA для программирования GPU.", None),  # clauses moved
    ("CUDA — параллельная вычислительная платформа NVIDIA для программирования GPU.", None),  # named, shortened
    ("Параллельная вычислительная платформа GPU для программирования NVIDIA, стандарт в ML.", "swapped"),  # roles
    ("Параллельная вычислительная платформа NVIDIA для программирования ML, стандарт в GPU.", "swapped"),
    ("Параллельная вычислительная платформа NVIDIA для программирования NVIDIA, стандарт в ML.", "unsupported"),
    ("Последовательная вычислительная платформа NVIDIA для программирования GPU.", "unsupported"),  # a word of its own
    ("Параллельная платформа NVIDIA не для программирования GPU.", "polarity"),  # a negation added
    ("CUDA — это CUDA.", "echo"),
])
def test_each_class_of_mistake_is_found_in_russian(sentence: str, problem: str | None) -> None:
    assert align(sentence, [SOURCE_RU], free=("CUDA", "NVIDIA CUDA")).problem == problem


@pytest.mark.parametrize(("sentence", "problem"), [
    (SOURCE_EN, None),
    ("A larger batch requires more memory.", None),
    ("A smaller batch can increase computational efficiency, but requires less memory.", "unsupported"),
    ("A larger batch can reduce computational efficiency.", "unsupported"),  # a direction swapped
    ("A larger batch requires less memory.", "unsupported"),
    # "more" and "less" are stopwords to retrieval, not here: the claim turns on them
    ("A batch requires more memory, but less efficiency.", "unsupported"),
    ("A larger batch does not require more memory.", "polarity"),
    ("A larger batch requires more memory than a larger batch.", "unsupported"),  # said twice
])
def test_each_class_of_mistake_is_found_in_english(sentence: str, problem: str | None) -> None:
    assert align(sentence, [SOURCE_EN], free=("Batch Size",)).problem == problem


def test_figures_and_units_must_be_the_source_sentences() -> None:
    source = "Высокоскоростная шина NVIDIA между GPU с пропускной способностью до 900 ГБ/с."
    assert align("NVLink обеспечивает до 900 ГБ/с.", [source], free=("NVLink",)).problem is None
    assert align("NVLink обеспечивает до 900 ТБ/с.", [source], free=("NVLink",)).problem == "unsupported"
    assert align("NVLink обеспечивает до 600 ГБ/с.", [source], free=("NVLink",)).problem == "unsupported"
    # "100 с" is seconds (the unit is a word though «с» is a preposition elsewhere)
    assert align("Задержка обычно <100 с.", ["Задержка обычно <100 мс."]).problem == "unsupported"


def test_a_negation_is_read_with_what_it_governs() -> None:
    source = "Остановка размещения не приостанавливает оплаченный период."
    assert align("Остановка размещения не приостанавливает оплаченный период.", [source]).problem is None
    assert align("Остановка размещения приостанавливает оплаченный период.", [source]).problem == "polarity"
    # "not only the weights" is not "only the weights"
    only = "The working capacity includes not only the model's weights."
    assert align("The working capacity includes only the model's weights.", [only]).problem == "unsupported"
    # a negation governing no word of the source («That is not why») is a claim of its own
    said = "That is why it is important to state the model's full name."
    assert align("That is not why it is important to state the model's full name.", [said]).problem == "polarity"


def test_two_adjacent_sentences_join_in_their_order_without_a_term_crossing() -> None:
    joined = "BM25 не является нейросетью. ¶ Он относится к традиционным методам поиска вместе с Vector Search."
    assert align("BM25 не является нейросетью и относится к традиционным методам поиска.", [joined]).problem is None
    assert align("Vector Search не является нейросетью.", [joined]).problem is not None


def test_reading_marks_terms_negations_and_clauses() -> None:
    tokens = read("DDP не шардирует параметры, а FSDP шардирует.").tokens
    assert [(t.key, t.term, t.negations, t.clause) for t in tokens] == [
        ("ddp", True, 0, 0), ("шардировать", False, 1, 0), ("paramet", False, 1, 0),
        ("fsdp", True, 0, 1), ("шардировать", False, 0, 1)]
