"""The one percentile used by every benchmark and the retrieval evaluation."""

from __future__ import annotations

from collections.abc import Iterable


def percentile(values: Iterable[float], pct: float) -> float:
    """Nearest-rank percentile of ``values`` (any order); 0.0 when there are none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]
