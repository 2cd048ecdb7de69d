"""Retrieval quality on the labelled eval set (`tests/eval/questions.yaml`): hit@k, MRR, gate accuracy."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from infra.stats import percentile
from infra.yamlfile import Text, load
from rag.retrieval.gate import GateEvidence, GateThresholds
from rag.retrieval.retriever import METHODS, HybridRetriever

EVAL_FILE = Path(__file__).resolve().parents[2] / "tests" / "eval" / "questions.yaml"


@dataclass(frozen=True)
class EvalQuestion:
    text: str
    lang: str
    kind: str
    expect: frozenset[str]  # acceptable entry ids or concept keys


@dataclass(frozen=True)
class EvalSet:
    in_scope: list[EvalQuestion]
    out_of_scope: list[str]


class _Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    q: Text
    lang: Literal["ru", "en"]
    kind: Literal["name", "concept", "translit", "paraphrase", "typo"]
    expect: Annotated[list[Text], Field(min_length=1)]  # acceptable entry ids or concept keys


class _QuestionsFile(BaseModel):
    """``tests/eval/questions.yaml``: questions the glossary answers, and questions it must refuse."""

    model_config = ConfigDict(extra="forbid")

    in_scope: list[_Question]
    out_of_scope: list[Text]


def load_eval_set(path: Path = EVAL_FILE) -> EvalSet:
    """The set; a malformed question raises :class:`YamlFileError` naming the file, the line and the field."""
    raw = load(_QuestionsFile, path)
    questions = [EvalQuestion(q.q, q.lang, q.kind, frozenset(q.expect)) for q in raw.in_scope]
    return EvalSet(questions, list(raw.out_of_scope))


@dataclass
class MethodReport:
    hit_at_1: float
    hit_at_3: float
    mrr: float
    oos_accuracy: float
    in_scope_rejected: float
    p50_ms: float
    p95_ms: float
    misses: list[dict[str, Any]]
    in_scope_evidence: list[GateEvidence]
    oos_evidence: list[GateEvidence]

    def as_dict(self) -> dict[str, Any]:
        return {"hit@1": round(self.hit_at_1, 4), "hit@3": round(self.hit_at_3, 4), "mrr": round(self.mrr, 4),
                "oos_accuracy": round(self.oos_accuracy, 4),
                "in_scope_rejected": round(self.in_scope_rejected, 4),
                "p50_ms": round(self.p50_ms, 2), "p95_ms": round(self.p95_ms, 2)}


def evaluate(retriever: HybridRetriever, eval_set: EvalSet, methods: Sequence[str] = METHODS,
             thresholds: GateThresholds | None = None) -> MethodReport:
    """Runs every question through `methods` (timed one by one) and scores ranking and gate."""
    gate = thresholds or retriever.thresholds
    hits1 = hits3 = 0
    reciprocal: list[float] = []
    latencies: list[float] = []
    misses: list[dict[str, Any]] = []
    in_evidence: list[GateEvidence] = []
    rejected = 0
    for question in eval_set.in_scope:
        started = time.perf_counter()
        result = retriever.search(question.text, k=10, methods=methods)
        latencies.append((time.perf_counter() - started) * 1000)
        evidence = result.evidence or GateEvidence(0.0, 0.0, 0.0)
        in_evidence.append(evidence)
        rejected += not gate.in_scope(evidence)
        rank = next((i for i, h in enumerate(result.hits, start=1)
                     if h.entry.id in question.expect or h.entry.concept in question.expect), None)
        hits1 += rank == 1
        hits3 += rank is not None and rank <= 3
        reciprocal.append(1.0 / rank if rank else 0.0)
        if rank != 1:
            misses.append({"q": question.text, "expect": sorted(question.expect), "rank": rank,
                           "top": [h.entry.id for h in result.hits[:3]]})
    oos_evidence: list[GateEvidence] = []
    for text in eval_set.out_of_scope:
        started = time.perf_counter()
        result = retriever.search(text, k=10, methods=methods)
        latencies.append((time.perf_counter() - started) * 1000)
        oos_evidence.append(result.evidence or GateEvidence(0.0, 0.0, 0.0))
    n = max(1, len(eval_set.in_scope))
    oos_correct = sum(not gate.in_scope(e) for e in oos_evidence)
    return MethodReport(
        hit_at_1=hits1 / n, hit_at_3=hits3 / n, mrr=statistics.fmean(reciprocal) if reciprocal else 0.0,
        oos_accuracy=oos_correct / max(1, len(eval_set.out_of_scope)), in_scope_rejected=rejected / n,
        p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95), misses=misses,
        in_scope_evidence=in_evidence, oos_evidence=oos_evidence,
    )
