"""`anchorgpu placements [--user ID] [--json]`: this owner's simulated placements, newest first.

JSON: {"placements": [{"placement_id", "status", "started_at", "paid_until", "quote_id", "total", "gpu",
"gpu_count", …}]}.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from anchorgpu.cli._common import owner_of
from anchorgpu.cli._placements import add_common, run_action
from infra.i18n import Lang

if TYPE_CHECKING:
    from gpu.placements.service import PlacementService


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("placements", help="list your simulated placements",
                            description="List the owner's simulated placements (status computed from the clock).")
    add_common(parser, key=False)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    owner = owner_of(args)
    lang = cast(Lang, args.lang)

    async def action(service: PlacementService) -> tuple[dict[str, Any], str]:
        from app.views.placements import render_placements
        from gpu.placements.engine import placement_contract

        placements = await service.owned(owner)
        now = service.clock()
        return ({"placements": [placement_contract(p, now) for p in placements]},
                render_placements(placements, now, lang))

    return run_action(args, "placements", action)
