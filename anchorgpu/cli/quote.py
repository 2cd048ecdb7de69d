"""`anchorgpu quote "REQUEST" [--key KEY] [--user ID] [--json]`: price a rental and store the quote.

Exit codes: 0 quoted (or replayed), 2 bad input (``{"error", "suggestions"}``), 3 idempotency conflict
(``{"error", "code": "idempotency_conflict"}``), 1 the database could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from anchorgpu.cli._common import emit, owner_of
from infra.db import create_engine, dispose_engine
from infra.i18n import Lang
from infra.settings import get_settings

EXIT_BAD_INPUT = 2
EXIT_CONFLICT = 3


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "quote", help="price a GPU rental, e.g. anchorgpu quote \"h100 x8 2 weeks\" --json",
        description="Price a GPU rental and store the quote. REQUEST: GPU xN DURATION "
                    "[on-demand|spot|committed], e.g. \"h100 x8 2 weeks\", \"a100 x4 1 month 2 weeks committed\".")
    parser.add_argument("request", nargs="+", help="the request, e.g. \"h100 x8 2 weeks\"")
    parser.add_argument("--key", help="idempotency key: repeating the same request with it returns the same quote")
    parser.add_argument("--user", help="owner the quote (and its key) belongs to; default cli:<login>")
    parser.add_argument("--json", action="store_true", help="print the machine-readable JSON contract")
    parser.add_argument("--lang", choices=["ru", "en"], default="en", help="language of the text output")
    parser.set_defaults(handler=run)


async def _quote(text: str, owner: str, key: str | None, lang: Lang) -> tuple[int, dict[str, Any], str]:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.views.quote import render_conflict, render_input_error, render_issued
    from gpu.data import GpuData
    from gpu.quote.engine import cli_contract
    from gpu.quote.request import QuoteInputError
    from gpu.quote.service import QuoteService
    from gpu.quote.store import IdempotencyConflictError

    settings = get_settings()
    engine = create_engine(settings.db.url)
    service = QuoteService(engine, GpuData(settings.data.data_dir),
                           retention_hours=settings.db.idempotency_retention_hours)
    try:
        issued = await service.quote_text(text, owner=owner, key=key)
        return 0, cli_contract(issued.quote, issued.quote_id, issued.replayed), render_issued(issued, lang)
    except QuoteInputError as exc:
        payload: dict[str, Any] = {"error": str(exc)}
        if exc.suggestions:
            payload["suggestions"] = exc.suggestions
        if exc.field:
            payload["field"] = exc.field
        return EXIT_BAD_INPUT, payload, render_input_error(exc, lang)
    except IdempotencyConflictError as exc:
        return (EXIT_CONFLICT, {"error": str(exc), "code": "idempotency_conflict",
                                "quote_id": exc.original.quote_id}, render_conflict(exc, lang))
    finally:
        await dispose_engine(engine)


def run(args: argparse.Namespace) -> int:
    text = " ".join(args.request).strip()
    try:
        code, payload, human = asyncio.run(_quote(text, owner_of(args), args.key, args.lang))
    except Exception as exc:  # the database is down or misconfigured: say so, no traceback
        code, payload, human = 1, {"error": f"could not store the quote: {type(exc).__name__}: {exc}"}, ""
        human = payload["error"]
    return emit(args, "quote", code, payload, human)
