"""`anchorgpu search` (placeholder until its engine lands)."""

from __future__ import annotations

import argparse

from anchorgpu.cli._common import not_available


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("search", help="(search: not available yet)")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return not_available("`anchorgpu search`")
