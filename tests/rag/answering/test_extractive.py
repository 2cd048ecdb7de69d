"""The extractive floor: which of the glossary's sentences are quoted, for a definition and for a how/why question."""

from __future__ import annotations

from rag.answering.extractive import answering_quotes, definition_quotes
from rag.glossary import GlossaryEntry


def lora(id_: str, term: str, definition: str, *aliases: str) -> GlossaryEntry:
    return GlossaryEntry(id=id_, term=term, aliases=aliases, definition=definition, source="000_seed.txt",
                         category="training", concept="lora")


NARROW = lora("lora-sd", "LoRA для Stable Diffusion", "Лёгкие адаптеры для Stable Diffusion.", "LoRA")
GENERAL = lora("lora", "LoRA", "Low-Rank Adaptation — обучение только матриц малого ранга.", "лора")


def test_the_entry_whose_headword_is_asked_is_quoted() -> None:
    """One file defines the concept twice: the question's own headword wins over an alias, in any rank."""
    assert [q.entry.id for q in definition_quotes([NARROW, GENERAL], "What is LoRA?")] == ["lora"]
    asked_narrow = definition_quotes([GENERAL, NARROW], "что такое LoRA для Stable Diffusion")
    assert [q.entry.id for q in asked_narrow] == ["lora-sd"]


def test_without_a_named_headword_retrieval_order_stands() -> None:
    assert [q.entry.id for q in definition_quotes([NARROW, GENERAL], "что такое лора")] == ["lora-sd"]
    assert [q.entry.id for q in definition_quotes([GENERAL, NARROW], "что такое лора")] == ["lora"]


def test_a_how_question_quotes_the_concepts_retrieval_ranked_second_and_third_too() -> None:
    """«почему модель на инференсе ест больше памяти, чем весит?»: retrieval ranks the concept it names first
    (inference), and the entry that answers (VRAM: working capacity holds more than the weights) second."""
    inference = GlossaryEntry(id="inference", term="Инференс", aliases=(), source="000_seed.txt",
                              definition="Процесс получения предсказаний от обученной модели.", category="inference",
                              concept="inference")
    vram = GlossaryEntry(id="vram", term="VRAM", aliases=(), source="002_seed.txt", category="hardware",
                         definition="Рабочая ёмкость включает не только веса модели: активации и кэш тоже.",
                         concept="vram")
    quotes = answering_quotes([inference, vram, GENERAL], "почему модель на инференсе ест больше памяти, чем весит?")
    assert [q.entry.id for q in quotes] == ["inference", "vram", "lora"]  # one entry of each other concept
    fourth = GlossaryEntry(id="epoch", term="Epoch", aliases=(), source="000_seed.txt", category="training",
                           definition="Один полный проход по датасету.", concept="epoch")
    second_vram = GlossaryEntry(id="vram-2", term="VRAM", aliases=(), source="003_seed.txt", category="hardware",
                                definition="Видеопамять GPU.", concept="vram")
    quotes = answering_quotes([inference, vram, second_vram, GENERAL, fourth], "почему модель ест больше памяти?")
    assert [q.entry.id for q in quotes] == ["inference", "vram", "lora"]  # two other concepts at most
    assert [q.entry.id for q in answering_quotes([NARROW, GENERAL], "как обучать лору?")] == ["lora-sd", "lora"]

