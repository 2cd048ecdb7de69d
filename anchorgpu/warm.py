"""Compute, at set-up, the vectors a first answer would otherwise wait for.

The semantic router's bank, the English renderings and the curated phrasings are embedded once per
(embedder, text) into the machine's caches (``RAG_ROUTER_CACHE_DIR``, ``RAG_VECTOR_CACHE_DIR``), which every
process and state folder reads. Embedding the phrasings alone takes about a minute on two cores, one query at
a time; done here, neither `make run`'s first answer nor a fresh state folder pays it. A no-op when the caches
are current (each is keyed by its text's digest), apart from loading the embedder (about a second).
"""

from __future__ import annotations

import argparse
import sys
import time

from app.router import BANK_FILE, BankError, SemanticRouter, load_bank
from infra.settings import get_settings
from rag.glossary import GlossaryError, load_glossary
from rag.retrieval.dense import EmbedderError, embedder_for
from rag.retrieval.english import served_english
from rag.retrieval.phrasings import served_phrasings


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m anchorgpu.warm", description=__doc__).parse_args(argv)
    settings = get_settings()
    started = time.perf_counter()
    try:
        entries = load_glossary(settings.data.data_dir)
        embedder = embedder_for(settings.rag)
        SemanticRouter.build(load_bank(settings.data.data_dir / BANK_FILE), embedder.encode_queries,
                             embedder.identity, settings.rag.router_cache_dir)
        english = served_english(entries, embedder, settings.rag, settings.data.data_dir)
        phrasings = served_phrasings(entries, embedder, settings.rag, settings.data.data_dir)
    except (GlossaryError, EmbedderError, BankError, OSError) as exc:
        # not fatal: the first start computes what is missing
        print(f"[warm] vectors not computed ahead: {exc}", file=sys.stderr)
        return 0
    print(f"[warm] ok: router bank, {0 if english is None else len(english)} English renderings, "
          f"{0 if phrasings is None else len(phrasings.owners)} phrasing rows "
          f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
