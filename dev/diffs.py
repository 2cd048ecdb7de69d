"""The difference a generator's ``--check`` shows between a committed file and the file as generated."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 200  # enough to see what changed; a wholesale difference is summarised


def difference(current: str, expected: str, name: str, limit: int = MAX_DIFF_LINES) -> list[str]:
    """A unified diff from the file as it is to the file as generated, at most ``limit`` lines."""
    lines = list(difflib.unified_diff(current.splitlines(), expected.splitlines(),
                                      f"{name} (committed)", f"{name} (generated)", lineterm=""))
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more diff lines"]
    return lines
