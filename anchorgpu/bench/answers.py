"""`anchorgpu bench answers`: faithfulness of the answers on the labelled set (tests/eval/faithfulness.yaml).

Every question goes the way a user's would in any front (the intent classifier first: prices, rules, GPU
specs and fit never reach the model), in two modes side by side in one run: ``model`` (the configured
model, generation with sentence verification and the extractive floor) and ``extractive`` (no model: the
glossary's sentences only). Follow-up items ask their history first in the same conversation. Prints, per
mode: the shares from :func:`rag.faithfulness.summarise` (answers with a contradicted claim, with an
unsupported number, that answer the question, rental-rule items correct…), how answers were produced
(generated / extractive / catalog / refused), time to the first verified sentence p50/p95, and retrieval
hit@1 / hit@3 of the items' entries.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anchorgpu.cli._common import print_json
from infra.settings import get_settings
from infra.stats import percentile

MODES = ("model", "extractive")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("answers", help="faithfulness of answers on the labelled set, model vs extractive")
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: LLM_MODEL_PATH)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N items (0: all)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: model,extractive")
    parser.add_argument("--failures", action="store_true", help="list the items that were not correct")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        print(f"anchorgpu bench answers: unknown mode {', '.join(unknown)} (use {', '.join(MODES)})")
        return 2
    print_json(asyncio.run(_bench(args.model, max(0, args.limit), modes, args.failures)))
    return 0


async def _bench(model: Path | None, limit: int, modes: list[str], failures: bool) -> dict[str, Any]:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.faithfulness_facts import catalog_facts
    from app.services import Services
    from infra.db import create_engine, dispose_engine
    from infra.migrate import migrate
    from infra.settings import LLMSettings
    from models import build_backend
    from rag.answer import Answerer, build_answerer
    from rag.conversation import SQLConversationStore
    from rag.faithfulness import load_faithfulness_set, score, summarise
    from rag.retriever import build_retriever

    settings = get_settings()
    if model is not None:
        settings = settings.model_copy(update={"llm": LLMSettings(
            **{**settings.llm.model_dump(), "model_path": model, "base_url": None})})
    services = Services.create(settings)
    items = load_faithfulness_set().items
    items = items[:limit] if limit else items
    facts = catalog_facts(services.data)
    # a catalog answer's numbers must be in the catalog: it is the source those answers cite
    catalog_source = CatalogSource(" ".join(facts.values()))
    retriever = await asyncio.to_thread(build_retriever, settings, services.glossary.get())
    report: dict[str, Any] = {"benchmark": "answers", "items": len(items), "embedder": settings.rag.embedding_model,
                              "retrieval": _retrieval(retriever, items)}
    with tempfile.TemporaryDirectory(prefix="bench-answers-") as tmp:
        engine = create_engine(f"sqlite+aiosqlite:///{Path(tmp) / 'history.db'}")
        history = SQLConversationStore(engine, settings.llm.history_tokens)
        await migrate(engine)
        try:
            for mode in modes:
                if mode == "model":
                    answerer = await build_answerer(settings, retriever, history, build_backend(settings.llm))
                    report["model"] = answerer.model_name
                else:
                    answerer = Answerer(retriever, None, conversations=history, top_k=settings.rag.top_k,
                                        unavailable_reason="extractive mode")
                verdicts, produced, ttft, wrong = [], Counter[str](), [], []
                started = time.monotonic()
                for item in items:
                    key = f"{mode}:{item.id}"
                    for earlier in item.history:
                        await _answer(services, answerer, earlier, key)
                    text, sources, status, first_s = await _answer(services, answerer, item.question, key)
                    if status == "catalog":
                        sources = [*sources, catalog_source]
                    verdict = score(item, text, sources, status, catalog=facts)
                    verdicts.append(verdict)
                    produced[status] += 1
                    if status == "answered":
                        ttft.append(first_s)
                    if failures and not verdict.correct:
                        wrong.append({"id": item.id, "status": status, "missing": verdict.missing,
                                      "violations": verdict.violations,
                                      "unsupported": verdict.unsupported_sentences, "answer": text[:300]})
                if answerer.backend is not None:
                    await answerer.backend.aclose()
                summary = summarise(verdicts).as_dict()
                report[mode] = {
                    **summary,
                    "produced": dict(produced),
                    "generated_share": round(produced["answered"] / max(1, len(items)), 4),
                    "extractive_share": round((produced["extractive"] + produced["fallback"]
                                               + produced["unavailable"] + produced["timeout"]
                                               + produced["busy"]) / max(1, len(items)), 4),
                    "ttft_first_verified_s": {"p50": round(percentile(ttft, 50), 3),
                                              "p95": round(percentile(ttft, 95), 3), "n": len(ttft)},
                    "wall_s": round(time.monotonic() - started, 1),
                }
                if failures:
                    report[mode]["failures"] = wrong
        finally:
            await history.aclose()
            await dispose_engine(engine)
            await services.aclose()
    return report


async def _answer(services: Any, answerer: Any, question: str, key: str) -> tuple[str, list[Any], str, float]:
    """One question the way the fronts answer it: (text, sources, status, seconds to the first sentence)."""
    from app.views.catalog import render_rule_answer, render_spec_answer
    from app.views.fit import render
    from app.views.prices import render_price_answer
    from gpu.fit.request import FitInputError
    from rag.prompt import detect_lang

    started = time.monotonic()
    intent = services.intents.classify_question(question, await answerer.previous_question(key))
    lang = detect_lang(question)
    if intent.kind == "rule":
        return render_rule_answer(intent, lang), [a.entry for a in intent.rules], "catalog", 0.0
    if intent.kind == "gpu_spec":
        return render_spec_answer(intent, services.data, lang), [], "catalog", 0.0
    if intent.kind == "price":
        return render_price_answer(intent, services.data, lang), [], "catalog", 0.0
    if intent.kind == "fit":
        try:
            return render(services.fit.fit(question), lang), [], "catalog", 0.0
        except FitInputError:
            pass
    answer = await answerer.ask(question, key)
    return answer.text, answer.sources, answer.status, answer.ttft_s or time.monotonic() - started


@dataclass(frozen=True)
class CatalogSource:
    """The GPU catalog and the price list as one source (what catalog answers cite)."""

    definition: str
    term: str = "catalog"
    aliases: tuple[str, ...] = ()


def _retrieval(retriever: Any, items: list[Any]) -> dict[str, Any]:
    """hit@1 / hit@3: an item's labelled entry (id or concept) among the first hits of its question."""
    answerable = [item for item in items if item.expect == "answer" and item.entries]
    hit1 = hit3 = 0
    for item in answerable:
        hits = retriever.search(item.question, 3).hits
        keys = [{hit.entry.id, hit.entry.concept} for hit in hits]
        labelled = set(item.entries)
        hit1 += bool(keys and keys[0] & labelled)
        hit3 += any(key & labelled for key in keys)
    n = max(1, len(answerable))
    return {"n": len(answerable), "hit@1": round(hit1 / n, 4), "hit@3": round(hit3 / n, 4)}
