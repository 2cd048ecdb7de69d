"""`anchorgpu search "QUESTION" [--k N] [--json]`: glossary retrieval without the LLM.

JSON contract (parsed by other tools): ``{"query": str, "in_scope": bool, "results": [{"id", "term",
"definition", "source", "score"}, …]}``, best first; ``source`` is the seed file name.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from anchorgpu.cli._common import print_json
from infra.settings import get_settings

MAX_K = 50


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("search", help="search the glossary (no LLM)",
                            description="Find glossary entries for a question (Russian or English).")
    parser.add_argument("question", nargs="+", help="the question, e.g. \"что такое KV-кэш\"")
    parser.add_argument("--k", type=int, default=None, help=f"number of results (1-{MAX_K}, default RAG_TOP_K)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def result_payload(query: str, in_scope: bool, hits: list[Any]) -> dict[str, Any]:
    return {
        "query": query,
        "in_scope": in_scope,
        "results": [
            {"id": h.entry.id, "term": h.entry.term, "definition": h.entry.definition,
             "source": h.entry.source, "score": h.score}
            for h in hits
        ],
    }


def _table(payload: dict[str, Any]) -> str:
    lines = [f"query: {payload['query']}",
             f"in scope: {'yes' if payload['in_scope'] else 'no (the glossary does not seem to cover this)'}"]
    if not payload["results"]:
        lines.append("no results")
        return "\n".join(lines)
    lines.append(f"{'#':>2}  {'score':>6}  {'id':<34} {'term':<32} source")
    for i, row in enumerate(payload["results"], start=1):
        lines.append(f"{i:>2}  {row['score']:>6.3f}  {row['id']:<34} {row['term'][:32]:<32} {row['source']}")
        definition = " ".join(row["definition"].split())
        lines.append(f"    {definition[:200]}{'…' if len(definition) > 200 else ''}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from rag.glossary import GlossaryError
    from rag.retrieval.dense import EmbedderError
    from rag.retrieval.index import IndexStoreError
    from rag.retrieval.retriever import build_retriever

    question = " ".join(args.question).strip()
    if not question:
        print("anchorgpu search: the question is empty. Usage: anchorgpu search \"what is a KV cache\"",
              file=sys.stderr)
        return 2
    settings = get_settings()
    k = settings.rag.top_k if args.k is None else args.k
    if not 1 <= k <= MAX_K:
        print(f"anchorgpu search: --k must be between 1 and {MAX_K} (got {k})", file=sys.stderr)
        return 2
    try:
        retriever = build_retriever(settings)
    except (GlossaryError, EmbedderError, IndexStoreError) as exc:
        print(f"anchorgpu search: {exc}", file=sys.stderr)
        return 1
    result = retriever.search(question, k=k)
    payload = result_payload(result.query, result.in_scope, result.hits)
    if args.json:
        print_json(payload)
    else:
        print(_table(payload))
    return 0
