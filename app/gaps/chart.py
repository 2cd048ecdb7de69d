"""The quality chart of ``anchorgpu report --chart`` and the bot's /report: one line per share, per ISO week.

matplotlib's object API on an Agg canvas (no pyplot global state), safe in a worker thread.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

SERIES = (("feedback_ratio", "👍 share of votes", "#55A868"), ("fallback_share", "fallback share", "#DD8452"),
          ("refusal_share", "refusal share", "#C44E52"))


def render_quality_chart(weeks: Sequence[dict[str, Any]]) -> bytes:
    figure = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    labels = [str(week["week"]) for week in weeks]
    positions = list(range(len(labels)))
    for key, label, color in SERIES:
        points = [(x, week[key]) for x, week in zip(positions, weeks, strict=True) if week.get(key) is not None]
        if points:
            axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label, color=color)
    axes.set_xticks(positions, labels, rotation=30 if len(labels) > 6 else 0)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("share")
    axes.set_title("Answer quality per ISO week" if labels else "Answer quality: no answers recorded yet")
    axes.grid(alpha=0.3)
    if labels:
        axes.legend(loc="best")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
