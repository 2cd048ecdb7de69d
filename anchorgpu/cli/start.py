"""`anchorgpu start PLACEMENT_ID [--key KEY] [--user ID] [--json]`: start a stopped placement again.

Allowed until the paid period ends.

JSON: the placement ({"placement_id", "status", "started_at", "paid_until", "quote_id", "total", "replayed",
"changed", …}). Exit codes: see :mod:`anchorgpu.cli._placements`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from anchorgpu.cli._placements import add_common, owner_of, result_output, run_action
from infra.i18n import Lang

if TYPE_CHECKING:
    from gpu.placements.service import PlacementService


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("start", help="start a stopped simulated placement again")
    parser.add_argument("placement_id", help="the placement id, P-…")
    add_common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    owner = owner_of(args)
    lang = cast(Lang, args.lang)

    async def action(service: PlacementService) -> tuple[dict[str, Any], str]:
        result = await service.start(args.placement_id, owner=owner, key=args.key)
        return result_output(result, lang)

    return run_action(args, "start", action)
