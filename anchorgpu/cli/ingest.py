"""`anchorgpu ingest [--rebuild] [--json]`: build or update the glossary vector index (idempotent).

Unchanged entries are skipped by content hash, changed ones re-embedded, removed ones deleted; the bot
also does this on start-up, so running it is only needed to pre-build or to check the index. It takes the
same writer lock (embedded folder) or lease (Chroma server) as the bot's start-up: replicas starting
meanwhile wait for it and read.
"""

from __future__ import annotations

import argparse
import sys

from anchorgpu.cli._common import print_json
from infra.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ingest", help="build/update the glossary index (idempotent)")
    parser.add_argument("--rebuild", action="store_true", help="drop the collection and embed everything again")
    parser.add_argument("--json", action="store_true", help="print the sync report as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rag.glossary import GlossaryError, load_glossary
    from rag.retrieval.dense import EmbedderError, get_embedder
    from rag.retrieval.english import current_english, served_english
    from rag.retrieval.index import IndexStoreError, open_index
    from rag.retrieval.phrasings import current_phrasings, served_phrasings

    settings = get_settings()
    rag = settings.rag
    try:
        entries = load_glossary(settings.data.data_dir)
        embedder = get_embedder(rag.embedding_model, rag.query_prompt, rag.passage_prompt)
        report = open_index(rag, entries, embedder, rebuild=args.rebuild).report
        # the curated English renderings' vectors too, so the first start reads them (rag.retrieval.english)
        english = current_english(entries, settings.data.data_dir)
        served_english(entries, embedder, rag, settings.data.data_dir)
        phrasings = current_phrasings(settings.data.data_dir)  # and how customers ask (rag.retrieval.phrasings)
        served_phrasings(entries, embedder, rag, settings.data.data_dir)
    except (GlossaryError, EmbedderError, IndexStoreError) as exc:
        print(f"anchorgpu ingest: {exc}", file=sys.stderr)
        return 1
    document = {"collection": rag.collection, "store": rag.chroma_url or str(rag.chroma_path),
                "embedding_model": rag.embedding_model, **report.as_dict(), "english": len(english),
                "phrasings": sum(len(v) for v in phrasings.values())}
    if args.json:
        print_json(document)
    else:
        print(f"glossary index {document['store']} [{rag.collection}]: {report.total} entries; "
              f"added {report.added}, updated {report.updated}, deleted {report.deleted}, "
              f"unchanged {report.unchanged}{', rebuilt' if report.rebuilt else ''} in {report.seconds:.1f}s; "
              f"{len(english)} with their English rendering")
    return 0
