"""A question about a tool the glossary lacks is refused by name, not answered with a neighbour's definition."""

from __future__ import annotations

import pytest

from app.services import catalog_names
from app.views.answer import answer_text
from gpu.data import GpuData
from infra.settings import REPO_ROOT, get_settings
from rag.answering.answerer import Answerer
from rag.answering.build import answer_vocabulary, curated_renderings
from rag.answering.events import Answer, Done
from rag.glossary import load_glossary
from rag.unknown_names import Vocabulary
from tests.rag.support import shared_retriever

GLOSSARY = load_glossary(REPO_ROOT / "data")


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    settings = get_settings()
    known = answer_vocabulary(settings, curated_renderings(settings), catalog_names(GpuData(REPO_ROOT / "data")))
    return known.with_glossary(GLOSSARY)


@pytest.mark.parametrize(("question", "lang", "names"), [
    ("как экспортировать модель из пайторча в onnx с динамическим размером батча?", "ru", ["onnx"]),
    ("что лучше для табличных данных — xgboost или catboost?", "ru", ["catboost"]),
    ("torch.compile выдаёт graph break на моём коде, как обойти?", "ru", ["torch.compile"]),
    ("what max_norm should i use when i train?", "en", ["max_norm"]),
])
def test_the_names_a_question_writes_that_the_bot_does_not_know(vocabulary: Vocabulary, question: str, lang: str,
                                                                names: list[str]) -> None:
    assert set(names) <= set(vocabulary.unknown_names(question, lang))  # type: ignore[arg-type]


@pytest.mark.parametrize(("question", "lang"), [
    ("nvidia-smi показывает GPU-Util 30%, это память занята?", "ru"),  # the parts of a name are known
    ("как ускорить gradint checkpointing?", "ru"),  # a misspelling of a known word
    ("учим llama на a100 в fp16, лезут nan — что даст bf16?", "ru"),  # a catalog model, a glossary name
    ("как в comfyui подключить лору?", "ru"),
    ("how do i stop my slurm job from hogging the gpu?", "en"),  # an English question's plain words: English
])
def test_names_the_bot_knows_and_plain_english_words_are_not_unknown(vocabulary: Vocabulary, question: str,
                                                                    lang: str) -> None:
    assert vocabulary.unknown_names(question, lang) == []  # type: ignore[arg-type]


def test_a_glossary_name_in_the_question_makes_it_a_question_about_that_concept(vocabulary: Vocabulary) -> None:
    # "onnx" is context here: the question is about LoRA, which the glossary has
    assert vocabulary.unknown_names("можно ли lora экспортировать в onnx?", "ru") == []


@pytest.mark.parametrize(("question", "names"), [
    ("how do I turn my model into a TensorRT engine for faster inference?", ["tensorrt"]),
    ("how do I wire my own tools into a LangChain agent?", ["langchain"]),
])
def test_an_english_question_s_inner_capital_names_count_and_its_plain_concept_words_exempt_nothing(
        vocabulary: Vocabulary, question: str, names: list[str]) -> None:
    # "inference", "model" are glossary names, but plain English words: the question is still about TensorRT
    assert vocabulary.unknown_names(question, "en") == names


@pytest.mark.parametrize(("question", "names"), [
    # a lower-case word no English text has is a name: a tool, a library, a file
    ("trtexec keeps failing when i build an int8 engine, what does it expect?", ["trtexec"]),
    ("is optuna better than grid search for tuning a small model?", ["optuna"]),
    ("is catboost faster than lightgbm on tabular data?", ["catboost", "lightgbm"]),
    ("yolov8 on our helmets dataset gives map 0.5, is that normal?", ["yolov8"]),  # a name with its version
])
def test_an_english_question_s_words_no_english_text_has_are_names(vocabulary: Vocabulary, question: str,
                                                                 names: list[str]) -> None:
    assert vocabulary.unknown_names(question, "en") == names


@pytest.mark.parametrize("question", [
    "what is diarizatsiya?",  # Russian in Latin letters
    "how many epok should i train for?",  # too short to tell a name from a misspelling
    "we hold a hackathon next week, which gpu for sdxl?",  # rare, but English
    "is backprop slower on a quantized model?",  # the glossary's alias
    "pushing microbatches through the gpus like an assembly line, is there a name for this?",  # "micro-batch"
    "сколько microbatches брать на один шаг?",  # written as one word: "micro batch", "micro-batch"
])
def test_rare_english_russian_in_latin_and_known_words_are_not_names(vocabulary: Vocabulary, question: str) -> None:
    lang = "ru" if any("а" <= ch <= "я" for ch in question) else "en"
    assert vocabulary.unknown_names(question, lang) == []  # type: ignore[arg-type]


def test_an_english_question_naming_a_concept_as_a_term_is_about_that_concept(vocabulary: Vocabulary) -> None:
    assert vocabulary.unknown_names("can I use LoRA adapters from a LangChain pipeline?", "en") == []


def test_a_reloaded_glossary_s_new_names_are_known_at_once() -> None:
    base = Vocabulary(["plain words only"])
    assert base.with_glossary(GLOSSARY).unknown_names("как настроить vllm?", "ru") == []
    assert base.with_glossary([]).unknown_names("как настроить vllm?", "ru") == ["vllm"]


async def answer(question: str, vocabulary: Vocabulary) -> Answer:
    answerer = Answerer(shared_retriever(), None, generate=False, vocabulary=vocabulary)
    events = [event async for event in answerer.answer(question, None)]
    assert isinstance(events[-1], Done)
    return events[-1].answer


async def test_the_answer_names_what_the_glossary_lacks_and_quotes_nothing(vocabulary: Vocabulary) -> None:
    found = await answer("как сконвертировать модель из питорча в onnx?", vocabulary)
    assert found.status == "out_of_scope" and not found.sources and not found.quotes, found
    assert "«onnx»" in answer_text(found)
    defined = await answer("как ускорить обучение с gradient checkpointing?", vocabulary)
    assert defined.status != "out_of_scope" and defined.sources, defined
