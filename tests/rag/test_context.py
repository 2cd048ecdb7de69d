"""What kind of question it is: definitions and comparisons are answered with the glossary's own words."""

from __future__ import annotations

import pytest

from rag.context import (
    comparison_sides,
    elliptical_subject,
    is_definition_question,
    looks_like_follow_up,
    resolve_comparison,
    their_difference,
)
from rag.glossary import load_glossary
from rag.retrieval.retriever import HybridRetriever
from tests.conftest import DATA_DIR
from tests.rag.support import shared_retriever


@pytest.mark.parametrize(("question", "sides"), [
    ("чем отличается tensor parallel от pipeline parallel", ("tensor parallel", "pipeline parallel")),
    ("Чем LoRA отличается от QLoRA?", ("LoRA", "QLoRA")),
    ("в чём разница между FP16 и BF16", ("FP16", "BF16")),
    ("what is the difference between DDP and FSDP", ("DDP", "FSDP")),
    ("DDP vs FSDP?", ("DDP", "FSDP")),
    ("how does GGUF differ from GGML?", ("GGUF", "GGML")),
    ("сравни vLLM и TGI", ("vLLM", "TGI")),
    ("что лучше для инференса: vLLM или TGI?", ("vLLM", "TGI")),
    ("bf16 или fp16 — что лучше для обучения и почему?", ("bf16", "fp16")),
    # the question and its circumstance first, the left side's name last
    ("что лучше для инференса vllm или tgi?", ("vllm", "tgi")),
    ("which is better for training, a100 or h100?", ("a100", "h100")),
    ("что лучше для обучения a100 80gb или h100 80gb?", ("a100 80gb", "h100 80gb")),
    # the question's own words before a side, a manner after it
    ("whats tensor parallel vs pipeline parallel in plain english", ("tensor parallel", "pipeline parallel")),
    ("what's lora vs qlora", ("lora", "qlora")),
    ("чем tp отличается от pp простыми словами?", ("tp", "pp")),
    ("awq vs gptq?", ("awq", "gptq")), ("an asr vs a tts", ("asr", "tts")),  # a side that begins with "a"
    # the two named first, the question after them
    ("лора и qlora в чем разница по человечески, и что брать?", ("лора", "qlora")),
    ("префилл и декод это одно и то же или разные вещи?", ("префилл", "декод")),
    ("zero-2 и zero-3 — чем отличаются?", ("zero-2", "zero-3")),
    ("prefill and decode, are they the same thing?", ("prefill", "decode")),
    ("awq and gptq what's the actual difference", ("awq", "gptq")),
    # a side's hedge is not its name
    ("should we finetune the model or just do rag?", ("finetune the model", "rag")),
    ("бери flash attention или просто взять xformers?", ("бери flash attention", "xformers")),
    ("what is the difference between ZeRO-2 and ZeRO-3 memory-wise", ("ZeRO-2", "ZeRO-3")),  # an aspect after it
])
def test_comparison_sides(question: str, sides: tuple[str, str]) -> None:
    assert comparison_sides(question) == sides


@pytest.mark.parametrize("question", [
    # two values of one setting, or an "or" whose right side runs into the next sentence: no two names compared
    "lora config has r=8 by default but people use 64 or 128. what do I get by raising it?",
    "batch 16 или 32?", "у нас 2 или 4. какой брать размер?",
    "докерфайл и образ это одно и то же или нет?", "is lora worth it or not?",  # a yes or no
])
def test_no_comparison_of_values_or_across_sentences(question: str) -> None:
    assert comparison_sides(question) is None


@pytest.mark.parametrize("question", ["что такое NVLink?", "What is a KV cache?", "define quantization",
                                      "NVLink — это что?", "что означает RAG", "tell me about vLLM"])
def test_definition_questions(question: str) -> None:
    assert is_definition_question(question)


@pytest.mark.parametrize("question", ["how does NVLink connect GPUs?", "what does gradient checkpointing trade off",
                                      "зачем нужен KV-кэш при генерации?"])
def test_other_questions_are_not_definitions(question: str) -> None:
    assert not is_definition_question(question)


def test_each_side_resolves_to_its_own_concept() -> None:
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "чем LoRA отличается от QLoRA?")
    assert found is not None
    assert found.left[0].concept != found.right[0].concept
    assert "lora" in found.left[0].concept and "qlora" in found.right[0].concept


def test_a_side_named_only_by_the_comparison_entry_is_answered_by_it() -> None:
    """The glossary has no entry of its own for RAG, only "RAG и fine-tuning": that entry answers."""
    from rag.answering.extractive import comparison_quotes

    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "чем RAG отличается от fine-tuning?")
    assert found is not None and [e.id for e in found.joint] == ["003-rag-vs-fine-tuning"]
    quoted = [quote.entry.id for quote in comparison_quotes(found)]
    assert "003-rag-vs-fine-tuning" in quoted and any(e.concept == "fine-tuning" for e in found.right)
    assert resolve_comparison(retriever, entries, "чем RAG отличается от борща?") is None


def test_a_side_that_points_back_takes_the_previous_question() -> None:
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "а чем она отличается от QLoRA?", previous="что такое LoRA?")
    assert found is not None and found.left[0].concept == "lora" and found.right[0].concept == "qlora"


def test_a_side_the_glossary_does_not_know_is_missing_and_the_other_is_still_quoted() -> None:
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "чем GGUF отличается от safetensors?")
    assert found is not None and found.missing == ("safetensors",)
    assert found.left[0].concept == "gguf" and found.right == []


@pytest.mark.parametrize(("question", "subject"), [
    ("а FSDP?", "FSDP"), ("and FSDP?", "FSDP"), ("what about ZeRO?", "ZeRO"), ("а тензорный параллелизм?",
                                                                             "тензорный параллелизм"),
    ("а сколько у неё памяти?", None), ("а для BF16?", None), ("а это?", None), ("что такое DDP?", None),
])
def test_an_elliptical_follow_up_names_its_subject(question: str, subject: str | None) -> None:
    assert elliptical_subject(question) == subject


def test_a_side_that_only_found_the_other_sides_entry_is_missing() -> None:
    """The glossary has Top-p and no top-k: "top-k" finds Top-p's entry, which it does not name."""
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "как top-p отличается от top-k?")
    assert found is not None and found.missing == ("top-k",) and found.left[0].concept == "top-p"


@pytest.mark.parametrize(("question", "follows"), [
    ("is spot worth it for inference?", False),
    ("is it possible to train on spot?", False),
    ("is it true that fp8 halves memory?", False),
    ("is it faster than FSDP?", True),
    ("and how much memory does it need?", True),
    ("а сколько у неё памяти?", True),
])
def test_an_idiomatic_it_is_not_a_pointer_to_the_turn_before(question: str, follows: bool) -> None:
    """"worth it" points at nothing: after a question on quantization, "is spot worth it for inference?" was
    searched together with it and answered with quantization's sentences first."""
    assert looks_like_follow_up(question) is follows


@pytest.mark.parametrize("question", ["What is the difference between a LoRA and a checkpoint in Stable Diffusion?",
                                      "чем lora отличается от чекпоинта в stable diffusion?"])
def test_where_a_side_is_found_is_not_part_of_its_name(question: str) -> None:
    """"a checkpoint in stable diffusion" is the checkpoint: the entry comparing LoRA and checkpoint answers."""
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, question)
    assert found is not None and "003-lora-vs-checkpoint" in [e.id for e in found.joint]


def test_the_left_sides_head_is_the_right_ones_when_a_name_holds_both() -> None:
    """«тензорный параллелизм или пайплайн»: «пайплайн-параллелизм», not «Retrieval Pipeline»."""
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "тензорный параллелизм или пайплайн — в чем разница?")
    assert found is not None and not found.missing
    assert found.left[0].concept == "tensor-parallelism" and found.right[0].concept == "pipeline-parallelism"


@pytest.mark.parametrize("question", ["does flash attention reduce memory or just speed?",
                                      "gradient checkpointing экономит память или просто время?"])
def test_an_alternative_of_common_words_is_no_side_compared(question: str) -> None:
    """What a thing does, two ways ("reduce memory or just speed"), compares no two things: no side is "missing"."""
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    assert resolve_comparison(retriever, entries, question) is None


def test_a_side_said_compared_is_missing_even_in_common_words() -> None:
    """"precision vs recall": compared in so many words, "recall" is a thing the glossary lacks."""
    entries = load_glossary(DATA_DIR)
    retriever = HybridRetriever(entries, None, None)
    found = resolve_comparison(retriever, entries, "precision vs recall, which one should i optimize")
    assert found is not None and found.missing == ("recall",)


@pytest.mark.parametrize("question", ["is l40s good for training or only inference?",
                                      "does flash attention reduce memory or just speed?"])
def test_what_is_asked_of_one_thing_two_ways_is_no_comparison(question: str) -> None:
    """"is l40s good for training or only inference?": the side "is l40s good" asks of the L40S; with the
    retriever the product runs (e5 and BM25), no side is reported missing and no comparison is made."""
    from tests.rag.support import shared_retriever

    retriever = shared_retriever()
    assert resolve_comparison(retriever, retriever.entries, question) is None


@pytest.mark.parametrize(("question", "earlier", "named"), [
    ("а чем они отличаются?", ["а qlora?", "что такое lora"], "чем lora отличается от qlora?"),
    ("what's the difference?", ["and fsdp?", "what is ddp"], "чем ddp отличается от fsdp?"),
    ("в чём разница между ними", ["что такое fp16?", "что такое bf16"], "чем bf16 отличается от fp16?"),
    ("are they the same thing?", ["what is top-p", "what is top-k"], "чем top-k отличается от top-p?"),
])
def test_a_comparison_asked_with_a_pronoun_names_the_two_things_asked_before(question: str, earlier: list[str],
                                                                             named: str) -> None:
    assert their_difference(question, earlier) == named


@pytest.mark.parametrize(("question", "earlier"), [
    ("а чем они отличаются?", ["что такое lora"]),  # one thing asked before: nothing to compare it with
    ("а чем они отличаются?", ["сколько стоит h100?", "что такое lora"]),  # the newer asks no thing
    ("чем lora отличается от qlora?", ["а fsdp?", "что такое ddp"]),  # the question names its own sides
    ("what's the difference?", ["what is lora?", "what is lora"]),  # the same thing twice
])
def test_no_pronoun_comparison_without_two_things_asked(question: str, earlier: list[str]) -> None:
    assert their_difference(question, earlier) is None


def test_a_form_factor_is_no_side_named_by_a_gpus_alias() -> None:
    """"sxm" found «NVIDIA A100» by its alias «A100 SXM», and the A100's definition was shown as the SXM side."""
    entries = load_glossary(DATA_DIR)
    retriever = shared_retriever()
    found = resolve_comparison(retriever, entries, "what is the difference between sxm and pcie")
    assert found is not None and found.missing == ("sxm",) and found.left == []
    assert found.right[0].concept == "pcie"
