"""`anchorgpu bench NAME`: benchmarks printed as JSON.

Each benchmark is a module in :mod:`anchorgpu.bench` exposing ``register(subparsers)``; they are found
by discovery so adding one touches no shared file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import anchorgpu.bench


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print JSON")
    bench_sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    for info in sorted(pkgutil.iter_modules(anchorgpu.bench.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"anchorgpu.bench.{info.name}").register(bench_sub)

    def show_help(_: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(handler=show_help)
