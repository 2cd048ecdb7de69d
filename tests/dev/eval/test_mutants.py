"""The verifier's mutation generators (dev.eval.mutants) on real glossary entries: each class writes the mistake
it names, the faithful classes say nothing the entry does not, and the tune/held-out split is fixed."""

from __future__ import annotations

import re
from functools import cache

import pytest

from dev.eval.mutants import (
    FAITHFUL_CLASSES,
    SIBLING_CONCEPTS,
    WRONG_CLASSES,
    Mutant,
    all_mutants,
    cited,
    comparative_swap,
    degenerate,
    entry_mutants,
    name_part_names,
    name_part_swap,
    named,
    negation_flip,
    number_change,
    part_of,
    question_for,
    reordered,
    role_swap,
    sentences,
    shortened,
    sibling_names,
    sibling_swap,
    split_entries,
)
from rag.glossary import GlossaryEntry, load_glossary
from rag.verification.renderings import RENDERINGS_FILE, load_renderings, source_sha
from tests.conftest import DATA_DIR

GLOSSARY = load_glossary(DATA_DIR)
ENTRIES = {entry.id: entry for entry in GLOSSARY}
RENDERINGS = {entry_id: rendering.en for entry_id, rendering in load_renderings(DATA_DIR / RENDERINGS_FILE).items()
              if entry_id in ENTRIES and rendering.source_sha == source_sha(ENTRIES[entry_id].definition)}
CATALOG_MEMORY = (24.0, 48.0, 80.0, 96.0, 141.0, 192.0)


@cache
def every_mutant() -> tuple[Mutant, ...]:
    return tuple(all_mutants(GLOSSARY, RENDERINGS, CATALOG_MEMORY))


def sentence_of(entry_id: str, index: int = 0) -> str:
    return sentences(ENTRIES[entry_id].definition)[index]


def words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


# ---------------------------------------------------------------- wrong classes


def test_comparative_swap_turns_a_comparison_over() -> None:
    sentence = sentence_of("003-batch-size", 1)  # «Больший batch может повысить …, но требует больше памяти.»
    variants = comparative_swap(sentence, "ru")
    assert any("меньше памяти" in v and "больше памяти" not in v for v in variants), variants
    assert any(v.startswith("Меньший batch") for v in variants)  # word forms, and the capital kept
    assert any("снизить эффективность" in v for v in variants)
    assert all(v != sentence for v in variants)
    english = "A higher rank lets the adapter store more information, but usually increases the size of the adapter."
    swapped = comparative_swap(english, "en")
    assert "A lower rank lets the adapter store more information, but usually increases the size of the adapter." \
        in swapped
    assert any("store less information" in v for v in swapped) and any("reduces the size" in v for v in swapped)


def test_comparative_swap_leaves_a_sentence_without_comparisons_alone() -> None:
    assert comparative_swap(sentence_of("000-cuda"), "ru") == []
    assert comparative_swap("Ускоритель для нейросетей.", "ru") == []  # an accelerator, not «ускоряет»


def test_negation_flip_removes_and_adds_a_not() -> None:
    stated = sentence_of("002-rental-term", 1)  # «Остановка … не приостанавливает оплаченный период.»
    assert negation_flip(stated, "ru") == ["Остановка смоделированного размещения приостанавливает оплаченный период."]
    added = negation_flip(sentence_of("002-ddp"), "ru")  # «…, который запускает реплики модели …»
    assert any("не запускает реплики" in v for v in added), added
    english = negation_flip("Stopping a simulated placement does not pause the paid period.", "en")
    assert "Stopping a simulated placement does pause the paid period." in english
    assert negation_flip("A component that distributes incoming requests.", "en") == [
        "A component that does not distribute incoming requests."]
    assert negation_flip("FP16 is a 16-bit format.", "en") == ["FP16 is not a 16-bit format."]


def test_number_change_changes_the_figure_or_its_unit() -> None:
    sentence = sentence_of("000-nvidia-h200")  # «Обновлённый H100 с 141 ГБ памяти HBM3e …»
    variants = number_change(sentence, "ru", CATALOG_MEMORY)
    changed = {re.search(r"с (\S+ \S+) памяти", v).group(1) for v in variants}  # type: ignore[union-attr]
    assert changed == {"282 ГБ", "142 ГБ", "141 ТБ", "96 ГБ"}  # ×2, +1, the unit, the nearest catalog size
    assert all("H100" in v and "HBM3e" in v for v in variants)  # the digits of names stay
    english = number_change("An updated H100 with 141 GB of HBM3e memory.", "en")
    assert "An updated H100 with 141 MB of HBM3e memory." in english
    assert number_change("Trained on 680,000 hours of audio.", "en")[:2] == [
        "Trained on 1,360,000 hours of audio.", "Trained on 680,001 hours of audio."]
    assert number_change("Обучена на 1,5 млн часов.", "ru")[:2] == ["Обучена на 3 млн часов.",
                                                                     "Обучена на 2,5 млн часов."]
    assert number_change("Реализация ZeRO-3 в PyTorch.", "ru") == []


def test_name_part_swap_says_the_definition_of_a_concept_whose_name_shares_a_part() -> None:
    parts = name_part_names(GLOSSARY)
    assert "Токен" in parts["tokens-per-second"]["ru"] and "Token" in parts["tokens-per-second"]["en"]
    assert "Tokens per Second" in parts["token"]["en"], "both ways: the part and the name that holds it"
    assert "tokens-per-second" not in parts.get("nvidia-h100", {}), "no shared part, no pair"
    sentence = sentence_of("000-tokens-per-second")
    assert name_part_swap(sentence, "ru", ["Токен"]) == [
        "Токен — основная метрика скорости инференса: количество генерируемых токенов за секунду."]
    made = [m for m in entry_mutants(ENTRIES["000-tokens-per-second"], None, (), (), parts["tokens-per-second"])
            if m.cls == "name_part_swap"]
    assert made and all(m.wrong and m.entry_id == "000-tokens-per-second" for m in made)


def test_sibling_swap_says_the_sentence_of_a_sibling() -> None:
    h100 = ENTRIES["000-nvidia-h100"]
    siblings = sibling_names(GLOSSARY)
    assert "NVIDIA A100" in siblings["nvidia-h100"] and "H100" not in siblings["nvidia-h100"]
    variants = sibling_swap(sentence_of("000-nvidia-h100"), "ru", h100.names, ["NVIDIA A100"], defines=True)
    assert variants == ["NVIDIA A100 — Datacenter-GPU NVIDIA на архитектуре Hopper с поддержкой FP8 и NVLink 4.0."]
    zero = "ZeRO — a DeepSpeed algorithm that eliminates duplication of parameters across GPUs."
    assert sibling_swap(zero, "en", ENTRIES["000-zero"].names, ["FSDP"]) == [
        "FSDP — a DeepSpeed algorithm that eliminates duplication of parameters across GPUs."]
    # the mutant keeps citing the original entry: the sibling is named and left uncited
    ddp = next(m for m in entry_mutants(ENTRIES["002-ddp"], None, siblings["ddp"])
               if m.cls == "sibling_swap")
    assert ddp.entry_id == "002-ddp" and ddp.text.startswith("FSDP — ") and ddp.wrong


def test_the_sibling_table_names_glossary_concepts() -> None:
    concepts = {entry.concept for entry in GLOSSARY}
    assert {concept for pair in SIBLING_CONCEPTS for concept in pair} <= concepts
    assert all(a != b for a, b in SIBLING_CONCEPTS)


def test_role_swap_swaps_two_latin_names() -> None:
    variants = role_swap(sentence_of("000-cuda"), "ru")  # «… платформа NVIDIA для программирования GPU, …»
    assert variants[0] == "Параллельная вычислительная платформа GPU для программирования NVIDIA, стандарт в ML."
    # names merely listed side by side say the same in either order
    assert role_swap("Базовые ядра для операций FP32 и INT32.", "ru") == []


def test_degenerate_repeats_the_subject_or_the_question() -> None:
    assert degenerate("LoRA", "ru")[0] == "LoRA — это LoRA."
    assert "Что такое LoRA?" in degenerate("LoRA", "ru") and "What is LoRA?" in degenerate("LoRA", "en")
    assert question_for(ENTRIES["000-lora"], "ru") == "что такое LoRA?"
    assert question_for(ENTRIES["000-quantization"], "en") == "what is Quantization?"  # a Russian term's alias


def test_the_citation_goes_before_the_final_stop() -> None:
    assert cited("H100 имеет 80 ГБ.") == "H100 имеет 80 ГБ [1]."
    assert cited("Что такое LoRA?") == "Что такое LoRA [1]?"
    assert cited("Без точки") == "Без точки [1]."


# ---------------------------------------------------------------- faithful classes


def test_faithful_generators_keep_the_entry_words() -> None:
    assert shortened(sentence_of("000-fp16"), "ru") == ["16-битный формат с плавающей точкой для ускорения "
                                                        "GPU-вычислений."]
    assert named(sentence_of("000-fp16"), "FP16", "ru") == [
        "FP16 — 16-битный формат с плавающей точкой для ускорения GPU-вычислений; требует loss scaling при обучении."]
    assert named("A dense vector of fixed dimension.", "Embedding", "en") == [
        "Embedding is a dense vector of fixed dimension."]
    reordered_ = reordered(sentence_of("003-embedding-vs-token"), "ru")
    assert reordered_ and words(reordered_[0]) == words(sentence_of("003-embedding-vs-token"))


def test_reordering_is_only_done_where_the_clauses_stand_alone() -> None:
    # the participle speaks of «кластер», not of the subject: moved first it would speak of the wrong noun
    assert reordered("Агрегация нескольких GPU в единый кластер, обеспечивающий параллелизм данных.", "ru") == []
    assert reordered("Группа серверов с GPU, объединённых высокоскоростной сетью.", "ru") == []
    assert reordered("Тепловая мощность GPU, определяющая требования к охлаждению.", "ru") == [
        "Определяющая требования к охлаждению, тепловая мощность GPU."]
    assert reordered("Moving parts between the GPU, the CPU and other levels.", "en") == []


@pytest.mark.parametrize("cls", FAITHFUL_CLASSES)
def test_every_faithful_sentence_says_only_the_entry_words(cls: str) -> None:
    for mutant in every_mutant():
        if mutant.cls != cls:
            continue
        entry = ENTRIES[mutant.entry_id]
        source = entry.definition if mutant.lang == "ru" else RENDERINGS[entry.id]
        allowed = words(f"{source} {' '.join(entry.names)}") | {"is"}  # "X is …" names the entry
        assert words(mutant.text) <= allowed, mutant
        assert not mutant.wrong


def test_every_class_is_made_and_no_mutation_is_a_copy() -> None:
    mutants = every_mutant()
    made = {(m.cls, m.lang) for m in mutants}
    assert {(cls, lang) for cls in WRONG_CLASSES for lang in ("ru", "en")} <= made
    assert {("verbatim", "ru"), ("rendering", "en"), ("named", "ru"), ("named", "en"), ("reordered", "ru"),
            ("shortened", "ru"), ("shortened", "en")} <= made
    sources = {(entry.id, sentence) for entry in GLOSSARY for text in (entry.definition, RENDERINGS.get(entry.id, ""))
               for sentence in sentences(text)}
    for mutant in mutants:
        assert mutant.wrong == (mutant.cls in WRONG_CLASSES)
        if mutant.wrong:
            assert (mutant.entry_id, mutant.text) not in sources, mutant  # a mutation changed something
        # each is made from a sentence of its own entry (a degenerate one from the name alone)
        assert (mutant.entry_id, mutant.source) in sources or (mutant.cls == "degenerate" and not mutant.source)
        assert (mutant.text == mutant.source) == (mutant.cls in ("verbatim", "rendering")), mutant
    assert len(mutants) == len(set(mutants))


# ---------------------------------------------------------------- the split


def test_the_split_is_deterministic_disjoint_and_about_half() -> None:
    parts = split_entries(GLOSSARY)
    assert split_entries(GLOSSARY) == parts
    tune, heldout = {e.id for e in parts["tune"]}, {e.id for e in parts["heldout"]}
    assert not tune & heldout and tune | heldout == set(ENTRIES)
    assert 0.35 <= len(tune) / len(ENTRIES) <= 0.65
    assert all(part_of(entry_id) == "tune" for entry_id in tune)
    # a fixed hash, not Python's salted one: the same ids fall on the same side in every process
    assert part_of("000-nvidia-h100") == part_of("000-nvidia-h100")
    assert {part_of(e.id) for e in GLOSSARY[:40]} == {"tune", "heldout"}


def test_mutants_of_an_entry_stay_on_its_side() -> None:
    entry: GlossaryEntry = ENTRIES["000-lora"]
    assert {part_of(m.entry_id) for m in entry_mutants(entry, RENDERINGS.get(entry.id))} == {part_of(entry.id)}
