"""`anchorgpu report [--since DATE] [--json] [--chart PATH] [--export-eval FILE]`: what the glossary fails at.

Reads the feedback store and the gap log (:mod:`app.gaps.log`) of the database at DB_URL: the most frequent
unanswered, downvoted and fallback questions clustered by meaning (:mod:`app.gaps.report`), votes, and
answer quality per ISO week. ``--chart`` draws that as a PNG; ``--export-eval`` writes the gap-log
questions as draft faithfulness-set items (empty labels) for a curator. Exit codes: 0 done, 1 the database
could not be read or a file not written, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from anchorgpu.cli._common import print_json


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("report", help="unanswered / downvoted / fallback questions and answer quality",
                            description="Cluster the gap log by meaning and show the feedback and answer quality "
                                        "per ISO week, from the database at DB_URL.")
    parser.add_argument("--since", metavar="DATE", help="only what happened from this date on (YYYY-MM-DD, UTC)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--chart", metavar="PATH", type=Path, help="write the quality chart as a PNG")
    parser.add_argument("--export-eval", metavar="FILE", type=Path,
                        help="write the gap-log questions as faithfulness-set items with empty labels (YAML)")
    parser.add_argument("--threshold", type=float, default=None,
                        help="cosine similarity that joins a question to a cluster (default 0.88)")
    parser.add_argument("--lang", choices=["ru", "en"], default="en", help="language of the text report")
    parser.set_defaults(handler=run)


def parse_since(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value.strip()), datetime.min.time())
        except ValueError:
            raise ValueError(f"--since: {value!r} is not a date (use YYYY-MM-DD)") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


async def _report(since: datetime | None, threshold: float | None, export: bool) -> tuple[dict[str, Any], str | None]:
    from app.gaps.log import build_feedback_store
    from app.gaps.report import DEFAULT_THRESHOLD, build_report, export_eval
    from infra.db import create_engine, dispose_engine
    from infra.migrate import migrate
    from infra.settings import get_settings
    from rag.retrieval.dense import embedder_for

    settings = get_settings()
    engine = create_engine(settings.db.url)
    try:
        await migrate(engine)
        store = build_feedback_store(settings, engine)
        report = await build_report(store, lambda: embedder_for(settings.rag), since=since,
                                    threshold=threshold or DEFAULT_THRESHOLD)
        exported = None
        if export:
            gaps = list(reversed(await store.gaps(since=since, kinds=("unanswered", "downvoted", "fallback"))))
            exported = export_eval(gaps)
        return report, exported
    finally:
        await dispose_engine(engine)


def _fail(message: str, code: int) -> int:
    print(f"anchorgpu report: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        return _fail(str(exc), 2)
    if args.threshold is not None and not 0.0 < args.threshold <= 1.0:
        return _fail("--threshold must be in (0, 1]", 2)
    from infra.settings import SettingsError

    try:
        report, exported = asyncio.run(_report(since, args.threshold, args.export_eval is not None))
    except SettingsError:
        raise
    except Exception as exc:  # an unreachable or broken database: one line, no traceback
        first = (str(exc).strip().splitlines() or [""])[0]
        return _fail(f"could not read the report: {type(exc).__name__}: {first}", 1)
    if args.export_eval is not None and exported is not None:
        try:
            args.export_eval.parent.mkdir(parents=True, exist_ok=True)
            args.export_eval.write_text(exported, encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {args.export_eval}: {exc}", 1)
    if args.chart is not None:
        from app.gaps.chart import render_quality_chart

        try:
            args.chart.parent.mkdir(parents=True, exist_ok=True)
            args.chart.write_bytes(render_quality_chart(report["weeks"]))
        except OSError as exc:
            return _fail(f"cannot write the chart {args.chart}: {exc}", 1)
    if args.json:
        print_json(report)
    else:
        from app.views.report import render_report_text

        print(render_report_text(report, args.lang))
    if args.export_eval is not None and exported is not None:
        items = exported.count("\n- id: ")
        print(f"wrote {items} item(s) to {args.export_eval}", file=sys.stderr)
    if args.chart is not None:
        print(f"wrote the chart to {args.chart}", file=sys.stderr)
    return 0
