"""The one ``--out`` of every benchmark: the JSON report printed as before, and also kept in a file.

``--out benchmarks/`` (an existing folder, or any path ending with ``/``) writes ``<folder>/<YYYY-MM-DD>-<name>.json``
(the UTC date); any other path is the file itself. The file is the printed report with a ``"run"`` object added:
which benchmark, when, at which commit, on what (Python, CPUs, machine). Standard output is left unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from anchorgpu.cli._common import print_json

REPO_ROOT = Path(__file__).resolve().parents[2]


def add_out_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="PATH",
                        help="also write the JSON report, with the run's commit, date and machine, to this file; "
                             "a folder (or a path ending with /) gets <YYYY-MM-DD>-<benchmark>.json")


def commit() -> str | None:
    """The checkout's short commit, or None without git (or outside a repository)."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def run_metadata(name: str, now: datetime) -> dict[str, Any]:
    return {"benchmark": name, "date": now.isoformat(timespec="seconds"), "commit": commit(),
            "python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine()}


def target(name: str, out: str | Path, now: datetime) -> Path:
    """The file ``out`` names: itself, or the dated report inside it when it is a folder."""
    path = Path(out)
    if str(out).endswith(("/", os.sep)) or path.is_dir():
        return path / f"{now:%Y-%m-%d}-{name}.json"
    return path


def emit(name: str, report: dict[str, Any], out: str | Path | None) -> Path | None:
    """Print ``report`` as JSON; with ``out``, also write it with its ``"run"`` metadata. Returns the file.

    The file is written first: a closed standard output (``| head``) does not lose a long run's figures.
    """
    path = None
    if out is not None and str(out) != "":
        now = datetime.now(UTC)
        path = target(name, out, now)
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"run": run_metadata(name, now), **{k: v for k, v in report.items() if k != "run"}}
        path.write_text(json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    print_json(report)
    return path
