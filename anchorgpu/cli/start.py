"""`anchorgpu start PLACEMENT_ID [--key KEY] [--user ID] [--json]`: start a stopped placement again.

Allowed until the paid period ends.

JSON: the placement ({"placement_id", "status", "started_at", "paid_until", "quote_id", "total", "replayed",
"changed", …}). Exit codes: see :mod:`anchorgpu.cli._placements`.
"""

from __future__ import annotations

import argparse

from anchorgpu.cli._placements import register_state_change


def register(sub: argparse._SubParsersAction) -> None:
    register_state_change(sub, "start", "start a stopped simulated placement again")
