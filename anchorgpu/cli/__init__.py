"""`anchorgpu` command line: a thin front over the same services the Telegram bot uses.

Each subcommand lives in its own module exposing ``register(subparsers)``; the parser sets
``handler`` to a function ``(args) -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence

from infra.settings import SettingsError

COMMAND_MODULES = ("chat", "ask", "search", "fit", "quote", "rent", "placements", "stop", "start", "extend", "gpus",
                   "run", "ingest", "migrate", "backup", "report", "bench")


class FriendlyParser(argparse.ArgumentParser):
    """argparse with "did you mean" for mistyped subcommands and exit code 2 for usage errors."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if "invalid choice" in message:
            bad = message.split("'")[1] if "'" in message else ""
            choices = [c for c in COMMAND_MODULES if c]
            close = difflib.get_close_matches(bad, choices, n=3, cutoff=0.5)
            if close:
                message += f" — did you mean: {', '.join(close)}?"
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """All subcommands, or only `only`: importing every command module (the chat console pulls in the
    whole service stack) would cost a one-shot `anchorgpu search` most of a second."""
    parser = FriendlyParser(
        prog="anchorgpu",
        description="AnchorGPU assistant: glossary answers, VRAM fit checks and rental quotes.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=FriendlyParser)
    for name in COMMAND_MODULES if only is None else (only,):
        module = importlib.import_module(f"anchorgpu.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments and arguments[0] in COMMAND_MODULES else None
    parser = build_parser(command)
    args = parser.parse_args(arguments)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except SettingsError as exc:
        print(f"anchorgpu: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (`| head`) went away: not an error of ours; keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
