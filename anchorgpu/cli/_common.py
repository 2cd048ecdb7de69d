"""Small helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def not_available(feature: str) -> int:
    print(f"anchorgpu: {feature} is not available yet in this version.", file=sys.stderr)
    return 2
