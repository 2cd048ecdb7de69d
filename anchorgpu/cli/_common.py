"""Small helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
