"""The faithfulness set (tests/eval/faithfulness.yaml) and its scorer (dev/eval/faithfulness.py).

The set is checked against the real data: every entry id and catalog ref exists, every pattern compiles,
the glossary text of an item's entries never triggers its own must_not (labels come from the glossary),
and the Russian labels are stated by the Russian entries they cite. The scorer is checked on hand-written
good and bad answers for the seven failures the small model was caught in.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field, RootModel

from dev.eval.catalog_facts import catalog_facts
from dev.eval.faithfulness import (
    KINDS,
    FaithfulnessItem,
    FaithfulnessSet,
    FaithfulnessSetError,
    Verdict,
    detect_yes_no,
    fold,
    load_faithfulness_set,
    score,
    summarise,
    unknown_references,
    unsupported_sentences,
)
from gpu.data import GpuData
from infra.settings import REPO_ROOT
from infra.yamlfile import load
from rag.glossary import GlossaryEntry, load_glossary


@pytest.fixture(scope="module")
def eval_set() -> FaithfulnessSet:
    return load_faithfulness_set()


@pytest.fixture(scope="module")
def glossary() -> list[GlossaryEntry]:
    return load_glossary(REPO_ROOT / "data")


@pytest.fixture(scope="module")
def facts() -> dict[str, str]:
    return catalog_facts(GpuData(REPO_ROOT / "data"))


def sources_of(item: FaithfulnessItem, glossary: list[GlossaryEntry]) -> list[GlossaryEntry]:
    return [e for e in glossary if e.id in item.entries or e.concept in item.entries]


# ------------------------------------------------------------------ the set


def test_every_referenced_entry_and_catalog_fact_exists(eval_set: FaithfulnessSet,
                                                        glossary: list[GlossaryEntry],
                                                        facts: dict[str, str]) -> None:
    known = {e.id for e in glossary} | {e.concept for e in glossary}
    assert unknown_references(eval_set, known, facts) == []


def test_unknown_references_are_reported(eval_set: FaithfulnessSet, glossary: list[GlossaryEntry],
                                         facts: dict[str, str]) -> None:
    known = {e.id for e in glossary if e.id != "002-rental-term"}
    problems = unknown_references(eval_set, known | {"rental-term"}, {k: v for k, v in facts.items()
                                                                      if not k.startswith("term.")})
    assert "ru-rental-stop-week: entry 002-rental-term" in problems
    assert "ru-rental-stop-week: catalog term.week" in problems


def test_coverage(eval_set: FaithfulnessSet) -> None:
    items = eval_set.items
    langs = Counter(i.lang for i in items)
    kinds = Counter(i.kind for i in items)
    assert len(items) >= 130
    assert 0.55 <= langs["ru"] / len(items) <= 0.7 and langs["en"] >= 0.3 * len(items), langs
    assert set(KINDS) <= set(kinds), set(KINDS) - set(kinds)
    assert sum(i.rental for i in items) >= 10
    assert kinds["comparison"] >= 10
    assert sum(bool(i.history) for i in items) >= 10
    assert 0.05 * len(items) <= kinds["out_of_scope"] <= 0.12 * len(items)  # refusals asked, but not mostly
    assert sum(i.yes_no is not None for i in items) >= 15
    assert sum(bool(i.catalog) for i in items) >= 15  # numbers that must come from the catalog
    for lang in ("ru", "en"):
        assert {i.kind for i in items if i.lang == lang} == set(KINDS), lang


def test_shape_of_every_item(eval_set: FaithfulnessSet) -> None:
    for item in eval_set.items:
        # the merged probe's ids name the probe, not the kind (tests/eval/test_faithfulness_probe.py checks it)
        assert item.id.startswith(f"{item.lang}-{item.kind if item.part == 'core' else item.part}-"), item.id
        assert (item.kind == "out_of_scope") == (item.expect == "refuse"), item.id
        assert (item.kind == "follow_up") <= bool(item.history), item.id
        assert item.question.strip() and all(h.strip() for h in item.history), item.id


def test_the_glossary_never_contradicts_its_own_labels(eval_set: FaithfulnessSet,
                                                       glossary: list[GlossaryEntry]) -> None:
    """An item's entries, read out verbatim, are a faithful answer: none of its must_not may match."""
    for item in (i for i in eval_set.items if i.expect == "answer" and i.entries):
        sources = sources_of(item, glossary)
        verbatim = "\n".join(e.passage() for e in sources)
        assert not score(item, verbatim, sources, "answered").contradicted, item.id


def test_russian_labels_are_stated_by_the_entries_they_cite(eval_set: FaithfulnessSet,
                                                            glossary: list[GlossaryEntry]) -> None:
    """Written from the glossary text: the cited (Russian) entries state the must_state facts. English items
    count too: their patterns accept Russian wording, as the model often answers in the glossary's language.
    Catalog figures and paraphrases (which name what the entries do not) have reference answers instead."""
    checked = [i for i in eval_set.items if i.expect == "answer" and not i.catalog and i.kind != "paraphrase"]
    stated = [i.id for i in checked
              if score(i, "\n".join(e.passage() for e in sources_of(i, glossary)),
                       sources_of(i, glossary), "answered").answered]
    assert len(checked) >= 90
    assert len(stated) >= 0.95 * len(checked), sorted({i.id for i in checked} - set(stated))


REFERENCE_ANSWERS = Path(__file__).with_name("faithfulness_answers.yaml")
# item id -> an answer; through infra.yamlfile, so an id written twice is refused, not silently overwritten
Answers = RootModel[dict[str, Annotated[str, Field(min_length=1)]]]


def test_every_label_can_be_satisfied_by_a_correct_answer(eval_set: FaithfulnessSet,
                                                          glossary: list[GlossaryEntry],
                                                          facts: dict[str, str]) -> None:
    """Items the Russian glossary text cannot vouch for (English, catalog figures, paraphrases) have a
    hand-written correct answer; each must score correct against its own sources and catalog facts. (The
    merged probe's labels are checked against the glossary's own text in test_faithfulness_probe.py.)"""
    answers = load(Answers, REFERENCE_ANSWERS).root
    needed = {i.id for i in eval_set.items if i.part == "core"
              and i.expect == "answer" and (i.lang == "en" or i.catalog or i.kind == "paraphrase")}
    assert needed <= set(answers), sorted(needed - set(answers))
    failing = {}
    for item_id, answer in answers.items():
        item = eval_set.by_id(item_id)
        verdict = score(item, answer, sources_of(item, glossary), "answered", catalog=facts)
        if not verdict.correct:
            failing[item_id] = (verdict.missing, verdict.violations, verdict.unsupported_sentences)
    assert not failing, failing


WRONG_ANSWERS = Path(__file__).with_name("faithfulness_wrong_answers.yaml")


def test_every_swapped_or_negated_answer_is_flagged() -> None:
    """The must_not patterns catch the failure they were written for, on plain wrong answers."""
    eval_set = load_faithfulness_set()
    wrong = load(Answers, WRONG_ANSWERS).root
    assert len(wrong) >= 60
    assert {"comparison", "yes_no", "rental", "number", "follow_up"} <= {eval_set.by_id(i).kind for i in wrong}
    missed = [item_id for item_id, answer in wrong.items()
              if not score(eval_set.by_id(item_id), answer, [], "answered").contradicted]
    assert not missed, missed


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "set.yaml"
    path.write_text(body, encoding="utf-8")
    return path


ITEM = ("items:\n- id: x-1\n  question: q?\n  lang: ru\n  kind: definition\n  expect: answer\n"
        "  entries: [000-lora]\n")


@pytest.mark.parametrize(("extra", "message"), [
    ("  must_state:\n    - ['(unclosed']\n", "line 9: items[0].must_state[0][0]: pattern '(unclosed' does not compile"),
    ("  must_state:\n    - ['ok']\n  must_not: ['[a-']\n",
     "line 10: items[0].must_not[0]: pattern '[a-' does not compile"),
    ("", "line 2: items[0]: an answerable item needs must_state"),
    ("  must_state:\n    - ['ok']\n  yes_no: maybe\n", "line 10: items[0].yes_no: Input should be 'yes' or 'no'"),
    ("  must_state:\n    - ['ok']\n  answer: 42\n", "line 10: items[0].answer: unknown field"),
    ("  must_state: ['ok']\n", "line 8: items[0].must_state[0]: Input should be a valid list"),
])
def test_a_broken_item_names_the_file_the_line_and_the_field(tmp_path: Path, extra: str, message: str) -> None:
    path = _write(tmp_path, ITEM + extra)
    with pytest.raises(FaithfulnessSetError, match="^" + re.escape(f"{path}, {message}")) as caught:
        load_faithfulness_set(path)
    assert ";" not in str(caught.value)


def test_a_broken_file_gets_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(FaithfulnessSetError, match="not found"):
        load_faithfulness_set(tmp_path / "missing.yaml")
    with pytest.raises(FaithfulnessSetError, match=r"set\.yaml, line 2: not valid YAML"):
        load_faithfulness_set(_write(tmp_path, "items: [\n"))
    with pytest.raises(FaithfulnessSetError, match=r"set\.yaml, line 1: items: required"):
        load_faithfulness_set(_write(tmp_path, "entries: []\n"))
    with pytest.raises(FaithfulnessSetError, match=r"set\.yaml, line 5: items\[0\]\.kind: must be one of"):
        load_faithfulness_set(_write(tmp_path, ITEM.replace("definition", "trivia")))
    with pytest.raises(FaithfulnessSetError, match=r"line 10: items\[1\]\.id: item id x-1 appears twice \(first at "
                                                   r"line 2\)"):
        body = ITEM + "  must_state:\n    - ['ok']\n"
        load_faithfulness_set(_write(tmp_path, body + body.removeprefix("items:\n")))


# ------------------------------------------------------------------ the seven known failures

KNOWN_FAILURES = [
    ("ru-rental-stop-week",
     "Да, вы можете остановить аренду и не платить за оставшуюся неделю.",
     "Нет. Остановка смоделированного размещения не приостанавливает оплаченный период [1]: неделя — это "
     "ровно 7 дней, и она оплачивается полностью."),
    ("ru-number-h100-memory",
     "У H100 16 ГБ видеопамяти HBM3 [1].",
     "У NVIDIA H100 80 ГБ памяти (и SXM, и PCIe); драйвер видит из них около 79,65 GiB."),
    ("ru-comparison-tensor-vs-pipeline",
     "Тензорный параллелизм распределяет слои модели по разным GPU, а конвейерный разбивает тензоры внутри "
     "одного слоя.",
     "Тензорный параллелизм разбивает тензоры модели по нескольким GPU и считает части одного слоя "
     "параллельно, внутри одного слоя [1]. Конвейерный параллелизм распределяет слои модели по разным GPU, "
     "и они обрабатывают разные микробатчи одновременно [2]."),
    ("ru-comparison-ddp-vs-fsdp",
     "DDP разделяет параметры, градиенты и состояние оптимизатора на части между GPU, а FSDP держит полную "
     "реплику модели в каждом процессе и синхронизирует градиенты.",
     "DDP запускает реплики модели в нескольких процессах и синхронизирует градиенты; память карт при этом "
     "не объединяется [1]. FSDP разделяет параметры, градиенты и состояние оптимизатора на части "
     "(шардирование, аналог ZeRO-3) [2]."),
    ("ru-comparison-lora-vs-qlora",
     "LoRA — это fine-tuning поверх 4-битной квантизованной модели, а QLoRA обновляет все веса в полной "
     "точности.",
     "LoRA обновляет только матрицы малого ранга вместо всех весов [1]. QLoRA — это квантизованная LoRA: "
     "fine-tuning поверх 4-битной модели, что снижает требования к VRAM примерно до 8 ГБ [2]."),
    ("ru-comparison-fp16-vs-bf16",
     "И FP16, и BF16 требуют loss scaling при обучении, потому что у обоих 16 бит.",
     "FP16 требует loss scaling при обучении [1]. BF16 имеет диапазон FP32 и 7-битную мантиссу, поэтому "
     "это стандарт для обучения LLM [2]."),
    ("ru-definition-gradient-checkpointing",
     "Gradient checkpointing сохраняет активации в файл чекпоинта на диске, чтобы сэкономить память.",
     "Gradient checkpointing — техника обучения: активации перевычисляются при backward pass вместо их "
     "хранения в памяти [1]."),
    ("en-rental-stop-week",
     "Yes - you can stop paying once you stop the placement.",
     "No. Stopping a simulated placement does not pause the paid period: a week is exactly 7 days and it is "
     "paid in full."),
    ("en-comparison-fp16-vs-bf16",
     "Both FP16 and BF16 need loss scaling during training.",
     "No: FP16 requires loss scaling in training, while BF16 has the range of FP32 with a 7-bit mantissa."),
]


@pytest.mark.parametrize(("item_id", "bad", "good"), KNOWN_FAILURES, ids=[f[0] for f in KNOWN_FAILURES])
def test_known_failure_is_flagged_and_its_correct_answer_passes(
        item_id: str, bad: str, good: str, eval_set: FaithfulnessSet, glossary: list[GlossaryEntry],
        facts: dict[str, str]) -> None:
    item = eval_set.by_id(item_id)
    sources = sources_of(item, glossary)
    wrong = score(item, bad, sources, "answered", catalog=facts)
    assert wrong.contradicted and not wrong.correct, wrong
    right = score(item, good, sources, "answered", catalog=facts)
    assert right.correct, right
    assert right.yes_no_correct is not False


# What the shipped small model (qwen2.5-coder-0.5b q4_k_m, through rag.answering.answerer.Answerer) really answered on
# 2026-12-01, with the entries it was given: (item, answer, sources, contradicted, answered).
RECORDED = [
    ("ru-rental-stop-week", "Да, можно остановить аренду и не платить за оставшуюся неделю. Цены на GPU и "
     "выбранные параметры формируют полную смету [1].", ["002-rental-term"], True, False),
    ("ru-number-h100-memory", "H100 — Datacenter-GPU NVIDIA с поддержкой FP8 и NVLink 4.0 [1].",
     ["000-nvidia-h100"], False, False),
    ("ru-comparison-tensor-vs-pipeline", "Тензорный параллелизм отличается от конвейерного в том, что он "
     "выполняет матричные операции смешанной точности и позволяет модели параллельно вычислять внутри одного "
     "слоя [1][2].", ["000-tensor-parallelism", "002-tensor-parallelism"], False, False),
    ("ru-comparison-ddp-vs-fsdp", "DDP (Fully Sharded Data Parallel) отличается от FSDP (Fully Sharded Data "
     "Parallel) в следующих точках: [1] 1. Функциональность: DDP позволяет модели обучаться в нескольких "
     "процессах и синхронизировать градиенты, что позволяет улучшить производительность. 2. Память: DDP "
     "использует память в нескольких процессах, что позволяет улучшить производительность. 3 [2]. "
     "Координация: DDP использует координаты, что позволяет улучшить производительность.",
     ["002-fsdp", "000-fsdp"], False, False),
    ("ru-comparison-lora-vs-qlora", "LoRA — это квантизованная LoRA: fine-tuning поверх 4-битной модели, "
     "снижающий требования к VRAM до ~8 ГБ [1].", ["000-qlora"], True, False),
    ("ru-comparison-fp16-vs-bf16", "FP16 и BF16 — разные форматы для ускорения GPU-вычислений, требующие "
     "loss scaling при обучении [1].", ["000-fp16"], True, False),
    ("ru-definition-gradient-checkpointing", "Gradient checkpointing — это технология обучения: перевычисление "
     "активаций при backward pass вместо их хранения в памяти [1].", ["000-gradient-checkpointing"], False,
     True),
]


@pytest.mark.parametrize(("item_id", "answer", "source_ids", "contradicted", "answered"), RECORDED,
                         ids=[r[0] for r in RECORDED])
def test_recorded_small_model_answers(item_id: str, answer: str, source_ids: list[str], contradicted: bool,
                                      answered: bool, eval_set: FaithfulnessSet,
                                      glossary: list[GlossaryEntry], facts: dict[str, str]) -> None:
    item = eval_set.by_id(item_id)
    sources = [e for e in glossary if e.id in source_ids]
    verdict = score(item, answer, sources, "answered", catalog=facts)
    assert (verdict.contradicted, verdict.answered) == (contradicted, answered), verdict
    assert not verdict.unsupported and verdict.correct == (answered and not contradicted)


def test_the_wrong_memory_figure_is_also_an_unsupported_number(eval_set: FaithfulnessSet,
                                                                glossary: list[GlossaryEntry],
                                                                facts: dict[str, str]) -> None:
    item = eval_set.by_id("ru-number-h100-memory")
    verdict = score(item, "У H100 16 ГБ видеопамяти. Пропускная способность 3,35 ТБ/с.",
                    sources_of(item, glossary), "answered", catalog=facts)
    assert verdict.unsupported_sentences == ("У H100 16 ГБ видеопамяти.", "Пропускная способность 3,35 ТБ/с.")
    # 3.35 TB/s is in the catalog, but not among the facts this item's answer was given
    bandwidth = eval_set.by_id("ru-number-h100-bandwidth")
    assert not score(bandwidth, "Пропускная способность 3,35 ТБ/с.", [], "answered", catalog=facts).unsupported


# ------------------------------------------------------------------ scorer units


def test_numbers_are_checked_against_sources_question_and_catalog() -> None:
    allowed = ["Квантизованная LoRA: fine-tuning поверх 4-битной модели, снижающий требования к VRAM до ~8 ГБ.",
               "NVIDIA H100 SXM 80GB: bandwidth_gb_s 3350.0", "сколько стоит RTX 4090?"]
    assert unsupported_sentences("Нужно около 8 ГБ. Пропускная 3.35 TB/s и 3 350 GB/s.", allowed) == []
    assert unsupported_sentences("RTX 4090 и FP16, ZeRO-3, sm_90: это имена, 2 подхода.", allowed) == []
    assert unsupported_sentences("Нужно около 12 ГБ. А ещё 7 дней.", allowed) == ["Нужно около 12 ГБ.",
                                                                                   "А ещё 7 дней."]
    assert unsupported_sentences("1. Первый пункт\n2. Второй [3]", allowed) == []


def test_a_catalog_figure_rounded_as_shown_and_a_ratio_beside_its_figures_are_supported() -> None:
    allowed = ["NVIDIA H100 SXM 80GB: bandwidth_gb_s 3350.0", "NVIDIA A100 80GB: bandwidth_gb_s 2039.0",
               "L40S: bandwidth_gb_s 864", "RTX 4090: bandwidth_gb_s 1008"]
    assert unsupported_sentences("Memory bandwidth, TB/s · 2.04 · 3.35", allowed) == []
    assert unsupported_sentences("Быстрее RTX 4090: 1,01 против 0,86 ТБ/с у L40S (×1,2).", allowed) == []
    # a rounding keeps the digits it shows, and a ratio needs its two figures in the sentence
    assert unsupported_sentences("Пропускная 2,10 ТБ/с.", allowed) == ["Пропускная 2,10 ТБ/с."]
    assert unsupported_sentences("Быстрее в 1,6 раза.", allowed) == ["Быстрее в 1,6 раза."]


def test_yes_no_opening() -> None:
    assert detect_yes_no("**Да**, можно.") == "yes"
    assert detect_yes_no("Нет — остановка не приостанавливает период.") == "no"
    assert detect_yes_no("No. It is paid in full.") == "no"
    assert detect_yes_no("Остановка не приостанавливает оплаченный период.") is None


def test_fold_keeps_clauses_and_drops_markup() -> None:
    assert fold("**LoRA** [1]\n- QLoRA: 4-бит\nЁлка") == "lora. qlora: 4-бит. елка"


def test_refusals(eval_set: FaithfulnessSet, glossary: list[GlossaryEntry]) -> None:
    weather = eval_set.by_id("ru-out_of_scope-weather")
    refused = score(weather, "Я отвечаю только на вопросы о GPU...", [], "out_of_scope")
    assert refused.correct and refused.refused_correctly and refused.answered
    model_refusal = score(weather, "В глоссарии ответа нет.", [], "answered")
    assert model_refusal.refused and model_refusal.correct
    guessed = score(weather, "Завтра в Москве +20 и солнечно.", [], "answered")
    assert not guessed.refused_correctly and not guessed.correct and guessed.unsupported
    lora = eval_set.by_id("ru-translit-lora")
    false_refusal = score(lora, "На этот вопрос в глоссарии ответа нет.", sources_of(lora, glossary),
                          "out_of_scope")
    assert false_refusal.refused and not false_refusal.refused_correctly and not false_refusal.answered
    assert not false_refusal.contradicted  # a refusal claims nothing


def test_yes_no_the_wrong_way_round_is_a_contradiction(eval_set: FaithfulnessSet) -> None:
    item = eval_set.by_id("ru-yes_no-bm25-neural")
    verdict = score(item, "Нет, BM25 является классическим алгоритмом поиска, не нейросетью.", [], "answered")
    assert verdict.yes_no_correct and verdict.correct
    wrong = score(item, "Да. Он относится к традиционным методам поиска.", [], "answered")
    assert wrong.contradicted and wrong.yes_no_correct is False


def test_summarise(eval_set: FaithfulnessSet, glossary: list[GlossaryEntry], facts: dict[str, str]) -> None:
    by_id = {i: eval_set.by_id(i) for i, _, _ in KNOWN_FAILURES}
    verdicts: list[Verdict] = []
    for item_id, _bad, good in KNOWN_FAILURES[:4]:
        verdicts.append(score(by_id[item_id], good, sources_of(by_id[item_id], glossary), "answered",
                              catalog=facts))
    for item_id, bad, _ in KNOWN_FAILURES[4:6]:
        verdicts.append(score(by_id[item_id], bad, sources_of(by_id[item_id], glossary), "answered",
                              catalog=facts))
    weather = eval_set.by_id("en-out_of_scope-capital")
    verdicts.append(score(weather, "Canberra.", [], "answered"))
    verdicts.append(score(eval_set.by_id("en-out_of_scope-joke"), "", [], "out_of_scope"))
    summary = summarise(verdicts)
    assert summary.overall.n == 8
    assert summary.overall.contradicted == pytest.approx(2 / 6)
    assert summary.overall.correct == pytest.approx(5 / 8)
    assert summary.rental_correct == 1.0
    assert summary.refusal_recall == 0.5 and summary.false_refusals == 0.0
    assert summary.by_lang["en"].n == 2 and summary.by_lang["ru"].n == 6
    assert summary.by_kind["comparison"].contradicted == pytest.approx(2 / 4)
    printed = summary.as_dict()
    assert printed["by_kind"]["rental"]["correct"] == 1.0 and printed["n"] == 8
    assert summarise([]).overall.n == 0
