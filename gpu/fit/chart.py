"""The /fit chart: one stacked bar per GPU (weights, KV cache, activations, ...) against usable memory.

Rendered with matplotlib's object API on an Agg canvas (no pyplot global state), so it is safe in a
worker thread; callers run it via asyncio.to_thread.
"""

from __future__ import annotations

import io
from functools import lru_cache

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gpu.fit.engine import GIB, FitResult

MAX_BARS = 8
COLORS = {"weights": "#4C72B0", "KV cache": "#DD8452", "activations": "#55A868", "gradients": "#C44E52",
          "optimizer": "#8172B3", "overhead": "#937860"}


ChartKey = tuple[tuple[tuple[str, float], ...], int, float, float, float, str, str, bool]


def chart_key(result: FitResult) -> ChartKey:
    """Everything the picture depends on: equal keys draw identical charts."""
    per = result.per_gpu
    parts = [("weights", per.weights), ("KV cache", per.kv_cache), ("activations", per.activations),
             ("gradients", per.gradients), ("optimizer", per.optimizer), ("overhead", per.overhead)]
    return (tuple((name, value / GIB) for name, value in parts if value > 0), result.request.gpu_count,
            result.usable_bytes / GIB, result.gpu.memory_gib, per.total / GIB, result.request.model.name,
            result.gpu.id, result.fits)


def render_chart(result: FitResult) -> bytes:
    return _render(*chart_key(result))


# Drawing costs hundreds of milliseconds of CPU; popular configurations repeat, and the picture depends
# only on these values, so identical requests reuse the PNG.
@lru_cache(maxsize=256)
def _render(parts: tuple[tuple[str, float], ...], count: int, usable: float, memory_gib: float,
            total_gib: float, model_name: str, gpu_id: str, fits: bool) -> bytes:
    bars = min(count, MAX_BARS)
    labels = [f"GPU {i}" for i in range(bars)]
    if count > MAX_BARS:
        labels[-1] = f"GPU {bars - 1}…{count - 1}"
    figure = Figure(figsize=(max(4.0, 1.1 * bars + 2.5), 4.2), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    bottoms = [0.0] * bars
    for name, value in parts:
        axes.bar(labels, [value] * bars, bottom=bottoms, color=COLORS[name], label=f"{name} {value:.1f}")
        bottoms = [b + value for b in bottoms]
    axes.axhline(usable, color="black", linestyle="--", linewidth=1.2, label=f"usable {usable:.1f}")
    axes.axhline(memory_gib, color="grey", linestyle=":", linewidth=1.0, label=f"total {memory_gib:.1f}")
    axes.set_ylabel("GiB per GPU")
    axes.set_ylim(0, max(total_gib, memory_gib) * 1.12)
    verdict = "fits" if fits else "does NOT fit"
    axes.set_title(f"{model_name} on {count}× {gpu_id}: {verdict}", fontsize=10)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
