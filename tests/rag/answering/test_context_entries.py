"""The context of an answer on the real glossary and retriever (rag.answering.context_entries)."""

from __future__ import annotations

import pytest

from rag.answering.context_entries import context_entries
from tests.rag.support import shared_retriever


@pytest.mark.parametrize(("question", "concept"), [
    # a definition whose subject is no plain noun phrase: the concept it names by a Latin term comes first
    ("what's the L40S actually built for? training big models or something else", "nvidia-l40s"),
    # a plain definition: retrieval's own call
    ("что такое L40S?", "nvidia-l40s"),
    # a GPU named beside another concept is where it happens; the concept asked comes first
    ("учим на a100 в fp16, лезут nan — что даст bf16?", "bf16"),
    ("is qlora enough to finetune a 13b model on my 4090?", "qlora"),
    # a GPU named alone is the subject
    ("на h100 загрузка 40%, почему?", "nvidia-h100"),
])
async def test_the_concept_a_question_asks_about_leads_its_context(question: str, concept: str) -> None:
    retriever = shared_retriever()
    entries = await context_entries(retriever, lambda: list(retriever.entries), question, [], top_k=4)
    assert entries is not None and entries[0].concept == concept, [e.id for e in entries or []]


@pytest.mark.parametrize("question", ["у меня вылетает CUDA out of memory при обучении, что делать",
                                      "training crashes with cuda oom, what can i do?",
                                      "my training keeps dying with OOM on 24gb"])
async def test_an_out_of_memory_error_in_training_is_about_saving_memory_not_the_cuda_platform(
        question: str) -> None:
    """"CUDA out of memory" names the error met, not CUDA: its definition says nothing of what to do."""
    retriever = shared_retriever()
    entries = await context_entries(retriever, lambda: list(retriever.entries), question, [], top_k=4)
    assert entries is not None, question
    assert entries[0].concept == "gradient-checkpointing", [e.id for e in entries]
    assert all(e.concept != "cuda" for e in entries), [e.id for e in entries]
