"""`anchorgpu extend PLACEMENT_ID "DURATION" [--key KEY] [--user ID] [--json]`: add whole terms.

The terms are added from ``paid_until`` (not from now) and priced by the current price list. JSON: the
placement plus ``"extension": {"hours", "total"}``. Exit codes: see :mod:`anchorgpu.cli._placements`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from anchorgpu.cli._common import owner_of
from anchorgpu.cli._placements import add_common, result_output, run_action
from infra.i18n import Lang

if TYPE_CHECKING:
    from gpu.placements.service import PlacementService


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("extend", help="extend a committed placement, e.g. anchorgpu extend P-… \"1 week\"")
    parser.add_argument("placement_id", help="the placement id, P-…")
    parser.add_argument("duration", nargs="+", help="whole days, weeks (7 d) or months (30 d), e.g. \"2 weeks\"")
    add_common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    owner = owner_of(args)
    lang = cast(Lang, args.lang)
    duration = " ".join(args.duration)

    async def action(service: PlacementService) -> tuple[dict[str, Any], str]:
        result = await service.extend(args.placement_id, duration, owner=owner, key=args.key)
        return result_output(result, lang)

    return run_action(args, "extend", action)
