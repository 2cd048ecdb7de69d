"""`anchorgpu bench NAME`: benchmarks printed as JSON, a thin entry into :mod:`dev.bench`.

The benchmarks are developer programs in the checkout's ``dev/`` tree, which the wheel and the Docker image
do not ship. Each is a module there exposing ``register(subparsers)``; they are found by discovery so adding
one touches no shared file. Without the tree, ``anchorgpu bench`` says so in one line.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType

UNAVAILABLE = ("anchorgpu bench: the benchmarks live in the repository's dev/ tree, which this installation "
               "does not have; run them from a checkout set up with scripts/setup.sh")


def _bench_package() -> ModuleType | None:
    """dev.bench, or None where the dev tree is not importable (an installed wheel, the Docker image)."""
    try:
        import dev.bench  # the one import of dev by the product: pyproject's import contract lets this pass
    except ModuleNotFoundError as exc:
        if exc.name not in ("dev", "dev.bench"):
            raise
        return None
    return dev.bench


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print JSON (needs the repository's dev/ tree)")
    package = _bench_package()
    if package is None:
        def unavailable(_: argparse.Namespace) -> int:
            print(UNAVAILABLE, file=sys.stderr)
            return 2

        parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        parser.set_defaults(handler=unavailable)
        return
    bench_sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}").register(bench_sub)

    def show_help(_: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(handler=show_help)
