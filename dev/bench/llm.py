"""`anchorgpu bench llm`: the local model raw vs through the answer pipeline, prefix cache, queue.

Prints one JSON object, all figures from this one run on one loaded model:

* ``decode``: the same messages (a real grounded prompt) generated greedily with the same token budget,
  alternately by raw llama-cpp-python (``Llama.create_chat_completion(stream=True)`` on the caller's
  thread) and by the full pipeline (``Answerer.answer``: retrieval, prompt, queue, worker thread,
  citation filter). Decode tokens/s = (tokens - 1) / (last token time - first token time); TTFT from a
  cold context (KV cache reset before every run). ``pipeline_vs_raw`` is the decode-speed ratio.
* ``prefix_cache``: TTFT of one question with a cold context vs with the static prefix (rules and
  examples) already evaluated, as a running bot has it; ``warm_vs_cold`` is their ratio.
* ``queue``: 8 (``--askers``) concurrent questions from different users through the one context:
  wall time, answers per minute, latency, the deepest queue position seen.
* ``citations`` (``--citations N``): N eval questions (tests/eval) answered; share citing a correct
  entry, share where the model's own brackets were right, citations outside the context (must be 0),
  and out-of-scope questions refused without the model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from pathlib import Path
from typing import Any

from dev.bench._report import add_out_argument, emit
from infra.settings import get_settings

SENTENCE_END = (". ", ".\n", "! ", "? ", "?\n", "!\n")
FIXED_QUESTION = "как PagedAttention уменьшает фрагментацию памяти?"
PREFIX_QUESTION = "как NVLink соединяет GPU?"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("llm", help="LLM decode speed raw vs pipeline, prefix cache, queue, citations")
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: LLM_MODEL_PATH)")
    parser.add_argument("--max-tokens", type=int, default=48, help="token budget per decode run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side for decode and prefix cache")
    parser.add_argument("--askers", type=int, default=8, help="concurrent askers for the queue run")
    parser.add_argument("--asker-tokens", type=int, default=16, help="token budget per queued answer")
    parser.add_argument("--citations", type=int, default=0, help="eval questions for the citation rate")
    parser.add_argument("--sections", default="decode,prefix,queue",
                        help="comma-separated subset of decode,prefix,queue,lookup to run")
    parser.add_argument("--lookup-questions", type=int, default=12,
                        help="eval questions for the lookup section (prompt-lookup decoding on vs off)")
    parser.add_argument("--oos", type=int, default=10, help="out-of-scope eval questions (with --citations)")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def _decode_rate(tokens: int, first: float, last: float) -> float:
    return (tokens - 1) / (last - first) if tokens > 1 and last > first else 0.0


def _med(values: list[float]) -> float:
    return round(statistics.median(values), 4) if values else 0.0


async def _raw_run(llama: Any, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
    """One greedy generation by raw llama-cpp-python: TTFT, decode speed, and the time from the first token to
    the end of the first sentence (what a first verified sentence waits on)."""
    def work() -> dict[str, Any]:
        start = time.perf_counter()
        first = last = sentence = 0.0
        pieces: list[str] = []
        for chunk in llama.create_chat_completion(messages=messages, stream=True, max_tokens=max_tokens,
                                                  temperature=0.0):
            text = chunk["choices"][0]["delta"].get("content")
            if text:
                last = time.perf_counter()
                first = first or last
                pieces.append(text)
                if not sentence and any(end in "".join(pieces) for end in SENTENCE_END):
                    sentence = last
        text = "".join(pieces)
        tokens = len(llama.tokenize(text.encode(), add_bos=False, special=False))
        return {"ttft_s": first - start, "tokens": tokens, "decode_tok_s": _decode_rate(tokens, first, last),
                "first_sentence_s": (sentence or last) - first, "text": text}

    return await asyncio.to_thread(work)


async def _pipeline_run(answerer: Any, question: str) -> dict[str, Any]:
    from rag.answering.events import Delta, Done

    start = time.perf_counter()
    first = last = 0.0
    answer = None
    async with contextlib.aclosing(answerer.answer(question, None)) as events:
        async for event in events:
            if isinstance(event, Delta):
                last = time.perf_counter()
                first = first or last
            elif isinstance(event, Done):
                answer = event.answer
    assert answer is not None
    return {"ttft_s": first - start, "tokens": answer.tokens, "status": answer.status,
            "decode_tok_s": _decode_rate(answer.tokens, first, last)}


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    from models import lookup_draft_tokens
    from models.llama_backend import LlamaCppBackend
    from rag.answering.answerer import Answerer
    from rag.retrieval.retriever import build_retriever

    settings = get_settings()
    model_path = args.model or settings.llm.model_path
    retriever = await asyncio.to_thread(build_retriever, settings)
    backend = LlamaCppBackend(model_path, n_gpu_layers=settings.llm.n_gpu_layers, n_ctx=settings.llm.n_ctx,
                              n_batch=settings.llm.n_batch, threads=settings.llm.threads,
                              lookup_draft_tokens=lookup_draft_tokens(settings.llm))
    load_start = time.perf_counter()
    await backend.load()
    result: dict[str, Any] = {
        "model": backend.model_name, "n_gpu_layers": settings.llm.n_gpu_layers,
        "threads": settings.llm.threads, "load_s": round(time.perf_counter() - load_start, 2),
    }

    def answerer_with(max_tokens: int) -> Answerer:
        return Answerer(retriever, backend, top_k=settings.rag.top_k, max_tokens=max_tokens, temperature=0.0,
                        timeout_s=600)

    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    from dev.eval.retrieval import load_eval_set

    eval_set = load_eval_set()
    if "decode" in sections:
        result["decode"] = await _decode_section(args, backend, answerer_with(args.max_tokens))
    if "lookup" in sections:
        result["lookup"] = await _lookup_section(args, backend, answerer_with(args.max_tokens), eval_set)
    if "prefix" in sections:
        result["prefix_cache"] = await _prefix_section(args, backend, answerer_with(4))
    if "queue" in sections and args.askers > 0:
        result["queue"] = await _queue_section(args, answerer_with(args.asker_tokens),
                                               [q.text for q in eval_set.in_scope[: args.askers]])
    if args.citations:
        result["citations"] = await _citation_section(args, answerer_with(settings.llm.max_tokens), eval_set,
                                                      settings.llm.max_tokens)
    await backend.aclose()
    return result


async def _decode_section(args: argparse.Namespace, backend: Any, pipeline: Any) -> dict[str, Any]:
    """The same messages and budget, raw llama-cpp-python vs the pipeline, alternating, cold cache."""
    from rag.answering.prompt import build_messages
    from rag.language import detect_lang

    entries = await pipeline.retrieve(FIXED_QUESTION, [])
    assert entries, "the fixed question must be in scope"
    messages = [{"role": m.role, "content": m.content}
                for m in build_messages(FIXED_QUESTION, entries, [], detect_lang(FIXED_QUESTION))]
    raw_runs, pipe_runs = [], []
    for _ in range(args.repeats):
        backend.reset_cache()
        raw_runs.append(await _raw_run(backend.llama, messages, args.max_tokens))
        backend.reset_cache()
        pipe_runs.append(await _pipeline_run(pipeline, FIXED_QUESTION))
    raw_rate = _med([r["decode_tok_s"] for r in raw_runs])
    pipe_rate = _med([r["decode_tok_s"] for r in pipe_runs])
    return {
        "question": FIXED_QUESTION, "max_tokens": args.max_tokens, "prompt_tokens": backend.llama.n_tokens,
        "raw": {"decode_tok_s": raw_rate, "ttft_cold_s": _med([r["ttft_s"] for r in raw_runs]),
                "tokens": [r["tokens"] for r in raw_runs]},
        "pipeline": {"decode_tok_s": pipe_rate, "ttft_cold_s": _med([r["ttft_s"] for r in pipe_runs]),
                     "tokens": [r["tokens"] for r in pipe_runs], "status": [r["status"] for r in pipe_runs]},
        "pipeline_vs_raw": round(pipe_rate / raw_rate, 3) if raw_rate else None,
        # each pipeline run against the raw run just before it: robust to the machine's speed drifting
        "pipeline_vs_raw_paired_median": _med([p["decode_tok_s"] / r["decode_tok_s"]
                                               for r, p in zip(raw_runs, pipe_runs, strict=True)
                                               if r["decode_tok_s"]]),
    }



async def _lookup_section(args: argparse.Namespace, backend: Any, pipeline: Any, eval_set: Any) -> dict[str, Any]:
    """Prompt-lookup decoding (models/prompt_lookup.py) on vs off: the same grounded prompts, greedy, the
    order alternating per question; the first run of each prompt only warms its prefix."""
    from models import GPU_LOOKUP_DRAFT_TOKENS
    from models.prompt_lookup import enable_prompt_lookup
    from rag.answering.prompt import build_messages
    from rag.language import detect_lang

    llama = backend.llama
    drafter = llama.draft_model or enable_prompt_lookup(llama, GPU_LOOKUP_DRAFT_TOKENS)
    rows: list[dict[str, Any]] = []
    for index, question in enumerate(q.text for q in eval_set.in_scope[: args.lookup_questions]):
        entries = await pipeline.retrieve(question, [])
        if not entries:
            continue
        messages = [{"role": m.role, "content": m.content}
                    for m in build_messages(question, entries, [], detect_lang(question))]
        llama.draft_model = None
        await _raw_run(llama, messages, 1)  # evaluates the prompt: both sides start from the same cache
        runs: dict[str, dict[str, Any]] = {}
        for side in (("off", "on") if index % 2 == 0 else ("on", "off")):
            llama.draft_model = drafter if side == "on" else None
            drafter.reset_counts()  # also begins the generation (Llama.create_chat_completion is called directly)
            runs[side] = await _raw_run(llama, messages, args.max_tokens)
            if side == "on":
                runs[side]["drafted"], runs[side]["accepted"] = drafter.drafted, drafter.accepted
        rows.append({"question": question, **{f"{side}_{key}": value for side, run in runs.items()
                                              for key, value in run.items() if key != "text"},
                     "same_text": runs["on"]["text"] == runs["off"]["text"]})
    llama.draft_model = drafter if backend.lookup_draft_tokens else None

    def ratio(key: str) -> float:
        return _med([r[f"on_{key}"] / r[f"off_{key}"] for r in rows if r[f"off_{key}"]])

    drafted = sum(r["on_drafted"] for r in rows)
    return {
        "questions": len(rows), "max_tokens": args.max_tokens, "draft_tokens": drafter.max_tokens,
        "off": {"decode_tok_s": _med([r["off_decode_tok_s"] for r in rows]),
                "first_sentence_s": _med([r["off_first_sentence_s"] for r in rows])},
        "on": {"decode_tok_s": _med([r["on_decode_tok_s"] for r in rows]),
               "first_sentence_s": _med([r["on_first_sentence_s"] for r in rows])},
        "decode_on_vs_off_paired_median": ratio("decode_tok_s"),
        "first_sentence_on_vs_off_paired_median": ratio("first_sentence_s"),
        "draft_acceptance": round(sum(r["on_accepted"] for r in rows) / drafted, 3) if drafted else None,
        "same_text": round(sum(r["same_text"] for r in rows) / len(rows), 3) if rows else None,
        "rows": rows,
    }


async def _prefix_section(args: argparse.Namespace, backend: Any, prefix: Any) -> dict[str, Any]:
    """TTFT from a cold context vs with the static prefix (rules, examples) already evaluated."""
    cold, warm = [], []
    for _ in range(args.repeats):
        backend.reset_cache()
        cold.append((await _pipeline_run(prefix, PREFIX_QUESTION))["ttft_s"])
        backend.reset_cache()
        await prefix.warm_up()
        warm.append((await _pipeline_run(prefix, PREFIX_QUESTION))["ttft_s"])
    return {
        "question": PREFIX_QUESTION, "ttft_cold_s": _med(cold), "ttft_warm_prefix_s": _med(warm),
        "warm_vs_cold": round(_med(warm) / _med(cold), 3) if cold and _med(cold) else None,
    }



async def _queue_section(args: argparse.Namespace, queued: Any, questions: list[str]) -> dict[str, Any]:
    """Concurrent askers (one user each) through the one context."""
    from rag.answering.events import Done

    positions: list[int] = []

    async def asker(index: int, question: str) -> tuple[float, str]:
        start = time.perf_counter()
        status = "?"
        async with contextlib.aclosing(queued.answer(question, None, user_key=f"user{index}")) as events:
            async for event in events:
                if hasattr(event, "position"):
                    positions.append(event.position)
                elif isinstance(event, Done):
                    status = event.answer.status
        return time.perf_counter() - start, status

    await queued.warm_up()
    wall_start = time.perf_counter()
    outcomes = await asyncio.gather(*(asker(i, q) for i, q in enumerate(questions)))
    wall = time.perf_counter() - wall_start
    latencies = [o[0] for o in outcomes]
    return {
        "askers": len(questions), "max_tokens": args.asker_tokens, "wall_s": round(wall, 2),
        "answers_per_min": round(60 * len(questions) / wall, 2),
        "latency_p50_s": _med(latencies), "latency_max_s": round(max(latencies), 2),
        "max_position_seen": max(positions, default=0),
        "statuses": {s: [o[1] for o in outcomes].count(s) for s in {o[1] for o in outcomes}},
    }



async def _citation_section(args: argparse.Namespace, cite: Any, eval_set: Any, max_tokens: int,
                            ) -> dict[str, Any]:
    """Eval questions answered: correct-citation rate, the model's own brackets, out-of-scope refusals."""
    from rag.answering.events import Delta, Done
    from rag.verification.citations import CITATION

    sample = eval_set.in_scope[: args.citations]
    correct = model_correct = outside = answered = 0
    misses: list[dict[str, Any]] = []
    for question in sample:
        context = await cite.retrieve(question.text, []) or []
        streamed: list[str] = []
        final = None
        async with contextlib.aclosing(cite.answer(question.text, None)) as events:
            async for event in events:
                if isinstance(event, Delta):
                    streamed.append(event.text)
                elif isinstance(event, Done):
                    final = event.answer
        assert final is not None
        keys = lambda e: {e.id, e.concept}  # noqa: E731
        context_ids = {e.id for e in context}
        outside += sum(1 for s in final.sources if s.id not in context_ids)
        ok = final.grounded and any(keys(s) & question.expect for s in final.sources)
        answered += final.status == "answered"
        correct += ok
        raw_numbers = {int(n) for g in CITATION.findall("".join(streamed)) for n in g.split(",")}
        model_correct += any(1 <= n <= len(context) and keys(context[n - 1]) & question.expect
                             for n in raw_numbers)
        if not ok:
            misses.append({"q": question.text, "status": final.status,
                           "sources": [s.id for s in final.sources]})
    refused = 0
    oos = eval_set.out_of_scope[: args.oos]
    for text in oos:
        final_oos = await cite.ask(text)
        refused += final_oos.status == "out_of_scope" and final_oos.tokens == 0
    return {
        "questions": len(sample), "max_tokens": max_tokens,
        "cite_correct_rate": round(correct / len(sample), 3),
        "model_own_brackets_correct_rate": round(model_correct / len(sample), 3),
        "answered_rate": round(answered / len(sample), 3),
        "citations_outside_context": outside,
        "oos_refused": f"{refused}/{len(oos)}", "misses": misses,
    }


def run(args: argparse.Namespace) -> int:
    emit("llm", asyncio.run(bench(args)), args.out)
    return 0
