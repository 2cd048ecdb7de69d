"""A GPU comparison as the user sees it: one column per GPU, the verdict for the job asked about, and where
the figures come from; as a :class:`Report` (rich fronts), as text (console, CLI, HTML) and as ``--json``.

Every figure is the catalog's (``data/gpus.yaml``) and every price the price list's; the winner is the
domain's (:mod:`gpu.compare`), this module only words it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from app.views.quote import money, number
from app.views.table import Report, Table, Text, render_report
from gpu.catalog import GPUSpec
from gpu.compare import DECIDING_ASPECTS, GpuComparison, Verdict
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup

_VENDOR_WORDS = ("NVIDIA ", "AMD ", "GeForce ", "Instinct ")
_PRECISION = {"bf16_tflops": "BF16", "fp16_tflops": "FP16"}


def short_name(spec: GPUSpec) -> str:
    """"NVIDIA H100 SXM 80GB" -> "H100 SXM 80GB": a column header, not the full product name."""
    name = spec.name
    for word in _VENDOR_WORDS:
        name = name.removeprefix(word)
    return name


def _plain(value: Decimal) -> Decimal:
    """Trailing zeros dropped without an exponent: 80.0 -> 80, 3.350 -> 3.35."""
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()


def _figure(value: float, lang: Lang) -> str:
    """A catalog number as written in the catalog, grouped and with the Russian decimal comma: 1 307,4."""
    return number(_plain(Decimal(repr(value))), lang)


def _terabytes(gb_s: float, lang: Lang) -> str:
    """GB/s as TB/s to two decimals: 2039 -> 2.04 (2,04)."""
    return number(_plain((Decimal(repr(gb_s)) / 1000).quantize(Decimal("0.01"), ROUND_HALF_UP)), lang)


def _basis_value(value: float, basis: str, lang: Lang) -> str:
    return _terabytes(value, lang) if basis == "bandwidth_gb_s" else _figure(value, lang)


def _ratio(ratio: Decimal, lang: Lang) -> str:
    """One decimal (×1,6), two where one would read ×1 (×1,04)."""
    shown = ratio.quantize(Decimal("0.1"), ROUND_HALF_UP)
    return number(_plain(shown if shown != 1 else ratio), lang)


def _set_name(comparison: GpuComparison, gpu_id: str) -> str:
    """"H100 SXM 80GB", or "4× H100 SXM 80GB" when sets of GPUs are compared."""
    name = short_name(comparison.spec(gpu_id))
    return f"{comparison.count_of(gpu_id)}× {name}" if comparison.in_sets else name


def _names(specs: Sequence[GPUSpec], lang: Lang) -> str:
    names = [short_name(spec) for spec in specs]
    if len(names) == 1:
        return names[0]
    return t("compare_pair", lang, head=", ".join(names[:-1]), last=names[-1])


def _cells(comparison: GpuComparison, lang: Lang) -> tuple[tuple[str, ...], ...]:
    def row(label: str, values: Sequence[str]) -> tuple[str, ...]:
        return (label, *values)

    specs = comparison.gpus
    bf16 = [_figure(s.bf16_tflops, lang) if s.bf16_tflops is not None else
            t("compare_no_bf16", lang, fp16=_figure(s.fp16_tflops, lang) if s.fp16_tflops is not None
              else t("compare_unknown", lang)) for s in specs]
    fp8 = [_figure(s.fp8_tflops, lang) if s.fp8_tflops is not None else t("compare_no_fp8", lang) for s in specs]
    prices = [t("compare_price_cell", lang, price=money(price, comparison.currency, lang)) if price is not None
              else t("compare_not_rented", lang) for price in comparison.prices]
    return (
        row(t("compare_row_memory", lang),
            [t("compare_memory_cell", lang, gb=_figure(s.memory_gb, lang), memory_type=s.memory_type).strip()
             for s in specs]),
        row(t("compare_row_bandwidth", lang), [_terabytes(s.bandwidth_gb_s, lang) for s in specs]),
        row(t("compare_row_bf16", lang), bf16),
        row(t("compare_row_fp8", lang), fp8),
        row(t("compare_row_interconnect", lang), [s.interconnect for s in specs]),
        row(t("compare_row_architecture", lang), [s.architecture or t("compare_unknown", lang) for s in specs]),
        row(t("compare_row_price", lang), prices),
    )


def _decided(comparison: GpuComparison, verdict: Verdict, lang: Lang) -> str:
    """The verdict sentence of one deciding aspect: the winner by how much, a tie, or not enough data."""
    basis = verdict.basis or ""
    precision = _PRECISION.get(basis, "")
    figure = dict(zip(comparison.ids, verdict.figures, strict=True))
    if verdict.leader is not None and verdict.runner_up is not None and verdict.ratio is not None:
        lead, other = figure[verdict.leader], figure[verdict.runner_up]
        assert lead is not None and other is not None  # decide() ranks known figures only
        return t(f"compare_verdict_{verdict.aspect}", lang, leader=_set_name(comparison, verdict.leader),
                 runner=_set_name(comparison, verdict.runner_up), lead=_basis_value(lead, basis, lang),
                 other=_basis_value(other, basis, lang), ratio=_ratio(verdict.ratio, lang), precision=precision)
    if verdict.tied:
        value = figure[verdict.tied[0]]
        assert value is not None
        return t(f"compare_tie_{verdict.aspect}", lang, gpus=_names([comparison.spec(i) for i in verdict.tied], lang),
                 lead=_basis_value(value, basis, lang), precision=precision)
    return t("compare_undecided", lang)


def _winner(comparison: GpuComparison, verdict: Verdict, lang: Lang) -> str:
    """One aspect's winner in the general verdict: a name, a tie, or a dash."""
    if verdict.leader is not None:
        return _set_name(comparison, verdict.leader)
    if verdict.tied:
        return t("compare_even", lang, gpus=_names([comparison.spec(i) for i in verdict.tied], lang))
    return t("compare_unknown", lang)


def verdict_text(comparison: GpuComparison, lang: Lang) -> list[str]:
    """The verdict line, then why that figure decides (and the FP16 fallback, when it applied)."""
    if comparison.aspect == "general":
        verdicts = [comparison.verdict_for(aspect) for aspect in DECIDING_ASPECTS]
        leaders = {verdict.leader for verdict in verdicts}
        if len(leaders) == 1 and (leader := leaders.pop()) is not None:  # one GPU wins every job outright
            return [t("compare_verdict_sweep", lang, leader=_set_name(comparison, leader)), *_sets(comparison, lang)]
        winners = {verdict.aspect: _winner(comparison, verdict, lang) for verdict in verdicts}
        return [t("compare_verdict_general", lang, **winners), *_sets(comparison, lang)]
    lines = [_decided(comparison, comparison.verdict(), lang), *_sets(comparison, lang),
             t(f"compare_why_{comparison.aspect}", lang)]
    if comparison.basis == "fp16_tflops":
        without = [spec for spec in comparison.gpus if spec.bf16_tflops is None]
        lines.append(t("compare_fp16_basis", lang, gpus=_names(without, lang)))
    return lines


def _sets(comparison: GpuComparison, lang: Lang) -> list[str]:
    """Sets of GPUs compared: the figures above are totals, and each set's price per hour."""
    if not comparison.in_sets:
        return []
    prices = [t("compare_set_price", lang, gpus=_set_name(comparison, spec.id),
                price=money(price * comparison.count_of(spec.id), comparison.currency, lang))
              for spec, price in zip(comparison.gpus, comparison.prices, strict=True) if price is not None]
    lines = [t("compare_sets_totals", lang)]
    if prices:
        lines.append(t("compare_sets_prices", lang, prices="; ".join(prices)))
    return lines


def compare_report(comparison: GpuComparison, lang: Lang) -> Report:
    """The comparison as one table (a column per GPU), the verdict around it and the source below."""
    verdict, *why = verdict_text(comparison, lang)
    table = Table(headers=(t("compare_row_spec", lang), *(short_name(spec) for spec in comparison.gpus)),
                  rows=_cells(comparison, lang))
    blocks: list[Text | Table] = [Text(verdict, bold=True), table, *(Text(line) for line in why)]
    if comparison.example_prices:
        blocks.append(Text(t("compare_example_prices", lang), note=True))
    blocks.append(Text(t("compare_source", lang), note=True))
    title = t("compare_title", lang, gpus=", ".join(short_name(spec) for spec in comparison.gpus))
    return Report(title=title, blocks=tuple(blocks))


def render_comparison(comparison: GpuComparison, lang: Lang, markup: Markup = PLAIN) -> str:
    """The same report as text: plain for the console and CLI, escaped Telegram HTML with ``HTML``."""
    return render_report(compare_report(comparison, lang), markup)


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {"basis": verdict.basis, "leader": verdict.leader, "runner_up": verdict.runner_up,
            "ratio": None if verdict.ratio is None else format(verdict.ratio, "f"), "tied": list(verdict.tied)}


def comparison_json(comparison: GpuComparison) -> dict[str, Any]:
    """The ``--json`` document: catalog figures as numbers, prices and ratios as exact strings."""
    gpus = []
    for spec, price in zip(comparison.gpus, comparison.prices, strict=True):
        gpus.append({
            "id": spec.id, "name": spec.name, "vendor": spec.vendor, "architecture": spec.architecture,
            "memory_gb": spec.memory_gb, "memory_type": spec.memory_type, "bandwidth_gb_s": spec.bandwidth_gb_s,
            "bf16_tflops": spec.bf16_tflops, "fp16_tflops": spec.fp16_tflops, "fp8_tflops": spec.fp8_tflops,
            "interconnect": spec.interconnect, "rented": price is not None,
            "on_demand_hourly": None if price is None else format(price, "f"),
            "count": comparison.count_of(spec.id),
        })
    return {
        "aspect": comparison.aspect,
        "gpus": gpus,
        "currency": comparison.currency,
        "example_prices": comparison.example_prices,
        **_verdict_json(comparison.verdict()),
        "figures": list(comparison.figures),
        # every job's winner, so a general comparison still says who leads where
        "by_aspect": {aspect: _verdict_json(comparison.verdict_for(aspect)) for aspect in DECIDING_ASPECTS},
        "sources": {"specs": "data/gpus.yaml", "prices": "data/prices.yaml"},
    }
