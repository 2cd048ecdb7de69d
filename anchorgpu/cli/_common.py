"""Small helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any


def print_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def owner_of(args: argparse.Namespace) -> str:
    """Whose quotes and placements a CLI call works on: ``--user``, else ``cli:<login>``."""
    if args.user:
        return str(args.user)
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli:local"


def emit(args: argparse.Namespace, command: str, code: int, payload: dict[str, Any], human: str) -> int:
    """A command's outcome: the JSON payload with ``--json``, else the text (on stderr when it failed)."""
    if args.json:
        print_json(payload)
    elif code == 0:
        print(human)
    else:
        print(f"anchorgpu {command}: {human}", file=sys.stderr)
    return code
