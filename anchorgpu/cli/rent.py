"""`anchorgpu rent "REQUEST" | --quote Q-… [--key KEY] [--user ID] [--json]`: a simulated placement.

JSON: {"placement_id", "status", "started_at", "paid_until", "quote_id", "total", "replayed", …} (times
ISO 8601 UTC). Exit codes: see :mod:`anchorgpu.cli._placements`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, cast

from anchorgpu.cli._common import owner_of, print_json
from anchorgpu.cli._placements import EXIT_BAD_INPUT, add_common, result_output, run_action
from infra.i18n import Lang

if TYPE_CHECKING:
    from gpu.placements.service import PlacementService


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "rent", help="rent a simulated placement, e.g. anchorgpu rent \"h100 x8 1 week committed\" --key K",
        description="Create a simulated placement (no real GPUs) from a request or from a stored quote. "
                    "A committed term is paid up front; stopping does not pause the paid period.")
    parser.add_argument("request", nargs="*", help="the request, e.g. \"h100 x8 1 week committed\"")
    parser.add_argument("--quote", help="rent a stored quote (Q-…) of this owner, at its prices")
    add_common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    text = " ".join(args.request).strip()
    if bool(text) == bool(args.quote):
        message = "give either a request (\"h100 x8 1 week committed\") or --quote Q-…, not both or neither"
        if args.json:
            print_json({"error": message, "code": "bad_arguments"})
        else:
            print(f"anchorgpu rent: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    owner = owner_of(args)
    lang = cast(Lang, args.lang)

    async def action(service: PlacementService) -> tuple[dict[str, Any], str]:
        if args.quote:
            result = await service.rent_quote(args.quote, owner=owner, key=args.key)
        else:
            result = await service.rent_text(text, owner=owner, key=args.key)
        return result_output(result, lang)

    return run_action(args, "rent", action)
