"""A definition is answered only with the concept the question names: "what is TensorRT?" is not «Tensor»."""

from __future__ import annotations

import pytest

from app.views.answer import answer_text
from infra.settings import REPO_ROOT
from rag.answering.answerer import Answerer
from rag.answering.events import Answer, Done
from rag.answering.prompt import Turn
from rag.context import resolve_comparison
from rag.glossary import GlossaryEntry, load_glossary
from rag.subject import definition_subject, names_subject, own_subject
from tests.rag.support import shared_retriever

GLOSSARY = load_glossary(REPO_ROOT / "data")


def concept(key: str) -> list[GlossaryEntry]:
    return [entry for entry in GLOSSARY if entry.concept == key]


@pytest.mark.parametrize(("question", "subject"), [
    ("what is tensorrt?", "tensorrt"), ("что такое gradient clipping?", "gradient clipping"),
    ("what is wandb and do I need it?", "wandb"), ("what is the L40S good for", "L40S"),
    ("what is FP8 used for", "FP8"), ("What is the difference between LoRA and QLoRA?", None),
    ("how does nvlink work?", None),
    ("what's the point of gradient accumulation?", "gradient accumulation"),  # the aspect asked is not the name
    ("what is the purpose of warmup", "warmup"),
    # where it is found is a circumstance, not part of its name
    ("what's an SM on nvidia gpus", "SM"), ("что такое tensor core у видеокарт nvidia?", "tensor core"),
    ("что такое nvlink на серверах dgx", "nvlink"),
])
def test_the_subject_of_a_definition_question(question: str, subject: str | None) -> None:
    assert definition_subject(question) == subject


@pytest.mark.parametrize(("subject", "key"), [
    ("kv cache", "kv-cache"), ("kv cahce", "kv-cache"), ("loras", "lora"), ("hbm3", "hbm"),
    ("mixed precision training", "mixed-precision"), ("paged attention", "pagedattention"),
    ("kv cache size", "kv-cache"), ("FSDP", "fsdp"), ("квантизация", "quantization"),
    ("diarizatsiya", "diarization"),  # Russian in Latin letters: not checked
    ("epok", "epoch"), ("kheckpoint", "checkpoint"),  # one sound, two spellings
    ("ZeRO stage 3", "zero"),  # a stage or a number after the name keeps it the same thing
    ("spot pricing", "spot-instance"), ("spot capacity", "spot-instance"),  # an offering said by its price
])
def test_a_concept_names_its_own_subject_in_any_spelling(subject: str, key: str) -> None:
    assert names_subject(subject, concept(key))


@pytest.mark.parametrize(("subject", "key"), [("tensorrt", "tensor"), ("gradient clipping", "gradient"),
                                              ("gradient clipping", "clip-vision"), ("wandb", "clip-vision"),
                                              ("tensor pricing", "tensor")])
def test_a_concept_whose_name_is_only_part_of_the_subject_does_not_name_it(subject: str, key: str) -> None:
    assert not names_subject(subject, concept(key))


async def answer(question: str) -> Answer:
    answerer = Answerer(shared_retriever(), None, generate=False)
    events = [event async for event in answerer.answer(question, None)]
    assert isinstance(events[-1], Done)
    return events[-1].answer


@pytest.mark.parametrize(("question", "term"), [("what is tensorrt?", "tensorrt"),
                                                ("что такое gradient clipping?", "gradient clipping")])
async def test_a_term_the_glossary_lacks_is_said_to_be_missing_not_answered_with_its_neighbour(
        question: str, term: str) -> None:
    found = await answer(question)
    assert found.status == "out_of_scope" and not found.sources, found
    assert term in answer_text(found)


async def test_a_comparison_side_the_glossary_lacks_is_missing_and_the_other_side_quoted() -> None:
    found = await answer("tensorrt vs vllm?")
    assert [entry.concept for entry in found.sources] == ["vllm"], found.sources
    assert "tensorrt" in answer_text(found)


@pytest.mark.parametrize(("question", "key"), [("what is a kv cache?", "kv-cache"), ("что такое LoRA?", "lora"),
                                               ("what is hbm3?", "hbm")])
async def test_a_term_the_glossary_has_is_still_defined(question: str, key: str) -> None:
    found = await answer(question)
    assert found.status == "extractive" and found.sources[0].concept == key, found


@pytest.mark.parametrize(("question", "left", "right"), [
    ("explain the difference between tensor and pipeline parallelism", "tensor-parallelism", "pipeline-parallelism"),
    ("чем отличается тензорный от конвейерного параллелизма?", "tensor-parallelism", "pipeline-parallelism"),
    ("difference between ddp and fsdp", "ddp", "fsdp"),
])
def test_a_head_word_the_sides_share_is_read_into_the_left_one(question: str, left: str, right: str) -> None:
    found = resolve_comparison(shared_retriever(), GLOSSARY, question)
    assert found is not None and found.left[0].concept == left and found.right[0].concept == right, found


@pytest.mark.parametrize(("question", "subject"), [("что такое rag и зачем он нужен?", "rag"),
                                                   ("что это такое?", None), ("what is it?", None),
                                                   # the term first, the question after it
                                                   ("кеш кв это что", "кеш кв"), ("qlora — это что?", "qlora"),
                                                   ("а что это?", None), ("сколько стоит это что", None)])
def test_a_question_s_own_subject_is_not_a_pronoun(question: str, subject: str | None) -> None:
    # «…и зачем он нужен?»: "он" is the question's own subject, not the turn before (rag.context)
    assert own_subject(question) == subject


async def test_a_comparison_asked_with_a_pronoun_quotes_both_things_asked_before() -> None:
    """«что такое lora», «а qlora?», «а чем они отличаются?»: both entries, not QLoRA and its neighbours."""
    answerer = Answerer(shared_retriever(), None, generate=False)
    history = [Turn("user", "что такое lora"), Turn("assistant", "…"), Turn("user", "а qlora?"),
               Turn("assistant", "…")]
    events = [event async for event in answerer.answer("а чем они отличаются?", None, history=history)]
    assert isinstance(events[-1], Done)
    answer = events[-1].answer
    assert [entry.concept for entry in answer.sources] == ["lora", "qlora"], answer.sources
