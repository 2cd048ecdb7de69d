"""`anchorgpu stop PLACEMENT_ID [--key KEY] [--user ID] [--json]`: stop a simulated placement (the paid period goes on).

JSON: the placement ({"placement_id", "status", "started_at", "paid_until", "quote_id", "total", "replayed",
"changed", …}). Exit codes: see :mod:`anchorgpu.cli._placements`.
"""

from __future__ import annotations

import argparse

from anchorgpu.cli._placements import register_state_change


def register(sub: argparse._SubParsersAction) -> None:
    register_state_change(sub, "stop", "stop a simulated placement (does not pause its paid period)")
