"""GPU comparisons as the user reads them: the catalog's figures side by side, the verdict for the job asked
about, the source; the same content as a report, plain text, Telegram HTML and --json."""

from __future__ import annotations

import dataclasses
import json
from decimal import ROUND_HALF_UP, Decimal

from app.views.compare import compare_report, comparison_json, render_comparison, short_name
from app.views.quote import number
from app.views.table import Table, Text, render_report
from gpu.compare import compare_gpus
from infra.i18n import Lang
from infra.markup import HTML, PLAIN
from tests.conftest import gpu_data

DATA = gpu_data()
CATALOG = DATA.gpus


def _figure(value: float, lang: Lang) -> str:
    """A catalog number as the views write it (decimal comma and grouping in Russian)."""
    exact = Decimal(repr(value))
    return number(exact.quantize(Decimal(1)) if exact == exact.to_integral_value() else exact.normalize(), lang)


def _tb_s(gb_s: float, lang: Lang) -> str:
    return _figure(float((Decimal(repr(gb_s)) / 1000).quantize(Decimal("0.01"), ROUND_HALF_UP)), lang)


def _price(gpu_id: str, lang: Lang) -> str:
    price = DATA.prices.on_demand(gpu_id)
    assert price is not None
    return f"{number(price, lang)} {DATA.prices.current().currency}"


def test_h100_vs_a100_for_inference_in_russian() -> None:
    h100, a100 = CATALOG.resolve("H100"), CATALOG.resolve("A100")
    text = render_comparison(compare_gpus(DATA, [h100.id, a100.id], "inference"), "ru")
    lead, other = _tb_s(h100.bandwidth_gb_s, "ru"), _tb_s(a100.bandwidth_gb_s, "ru")
    assert (lead, other) == ("3,35", "2,04")  # the brief's own example, from the shipped catalog
    assert (f"Для инференса быстрее {short_name(h100)}: пропускная способность памяти {lead} против {other} ТБ/с "
            f"у {short_name(a100)} (×1,6).") in text
    assert "Генерация токенов ограничена пропускной способностью памяти." in text
    assert "Источник: каталог GPU (data/gpus.yaml); цены — прайс-лист (data/prices.yaml)." in text
    for spec in (h100, a100):
        assert f"{_figure(spec.memory_gb, 'ru')} ГБ {spec.memory_type}" in text
        assert spec.bf16_tflops is not None and _figure(spec.bf16_tflops, "ru") in text
        assert spec.interconnect in text and spec.architecture in text
        assert f"{_price(spec.id, 'ru')}/ч" in text
    assert h100.fp8_tflops is not None and _figure(h100.fp8_tflops, "ru") in text  # "1 979", grouped
    assert a100.fp8_tflops is None and "FP8, TFLOPS (плотные) · 1\u00a0979 · нет" in text


def test_h100_vs_a100_for_inference_in_english() -> None:
    h100, a100 = CATALOG.get("h100-sxm"), CATALOG.get("a100-80gb")
    text = render_comparison(compare_gpus(DATA, [h100.id, a100.id], "inference"), "en")
    assert ("For inference H100 SXM 80GB is faster: memory bandwidth 3.35 vs 2.04 TB/s for A100 80GB (×1.6)."
            in text)
    assert "Token generation (decode) is bound by memory bandwidth." in text
    assert "Source: the GPU catalog (data/gpus.yaml); prices: the price list (data/prices.yaml)." in text
    assert f"{_price('h100-sxm', 'en')}/h" in text and f"{_price('a100-80gb', 'en')}/h" in text
    assert f"Memory · 80 GB {h100.memory_type} · 80 GB {a100.memory_type}" in text


def test_training_with_a_gpu_without_bf16_or_fp8_and_not_rented() -> None:
    v100, a100 = CATALOG.get("v100-16gb"), CATALOG.get("a100-80gb")
    comparison = compare_gpus(DATA, [v100.id, a100.id], "training")
    ru = render_comparison(comparison, "ru")
    assert v100.fp16_tflops is not None and a100.fp16_tflops is not None
    fp16_v100, fp16_a100 = _figure(v100.fp16_tflops, "ru"), _figure(a100.fp16_tflops, "ru")
    assert (f"Для обучения быстрее {short_name(a100)}: FP16 (плотные) {fp16_a100} против {fp16_v100} TFLOPS "
            f"у {short_name(v100)}") in ru
    assert f"нет (FP16: {fp16_v100})" in ru  # the BF16 cell of the V100
    assert f"Нет BF16 у {short_name(v100)}, поэтому у всех сравниваются FP16 TFLOPS" in ru
    assert "не сдаётся" in ru and "FP8, TFLOPS (плотные) · нет · нет" in ru
    en = render_comparison(comparison, "en")
    assert "not rented" in en and f"no (FP16: {_figure(v100.fp16_tflops, 'en')})" in en
    assert "/fit shows whether the model fits in memory" in en


def test_ties_and_the_general_verdict() -> None:
    h200, h100 = CATALOG.get("h200"), CATALOG.get("h100-sxm")
    tie = render_comparison(compare_gpus(DATA, [h200.id, h100.id], "training"), "ru")
    assert h200.bf16_tflops is not None
    assert (f"Для обучения {short_name(h200)} и {short_name(h100)} одинаково быстры: BF16 (плотные) у каждой "
            f"{_figure(h200.bf16_tflops, 'ru')} TFLOPS.") in tie
    general = render_comparison(compare_gpus(DATA, [h200.id, h100.id], "general"), "en")
    assert ("There is no single winner; it depends on the job. Inference (memory bandwidth): H200 SXM 141GB. "
            "Training (TFLOPS): a tie (H200 SXM 141GB and H100 SXM 80GB). Memory size: H200 SXM 141GB.") in general
    mixed = render_comparison(compare_gpus(DATA, ["b200", "mi325x"], "general"), "ru")
    assert ("Инференс (пропускная способность памяти): B200 180GB. Обучение (TFLOPS): B200 180GB. "
            "Объём памяти: MI325X 256GB.") in mixed
    # one GPU ahead on every figure is said as such, not as "no single winner"
    sweep = render_comparison(compare_gpus(DATA, ["h200", "h100-sxm", "mi300x"], "general"), "ru")
    assert "MI300X 192GB впереди для любой задачи" in sweep and "Единого победителя нет" not in sweep
    memory_tie = render_comparison(compare_gpus(DATA, ["h100-sxm", "a100-80gb"], "memory"), "en")
    assert "H100 SXM 80GB and A100 80GB have the same memory: 80 GB each." in memory_tie


def test_the_report_has_a_column_per_gpu_and_text_renders_the_same_content() -> None:
    comparison = compare_gpus(DATA, ["a100-80gb", "h200", "h100-sxm"], "inference")
    report = compare_report(comparison, "en")
    (table,) = report.tables()
    assert isinstance(table, Table)
    assert table.headers == ("Spec", "A100 80GB", "H200 SXM 141GB", "H100 SXM 80GB")
    assert all(len(row) == 4 for row in table.rows) and len(table.rows) == 7
    first = report.blocks[0]
    assert isinstance(first, Text) and first.bold
    h200, h100 = CATALOG.get("h200"), CATALOG.get("h100-sxm")
    assert first.text.startswith(f"For inference H200 SXM 141GB is faster: memory bandwidth "
                                 f"{_tb_s(h200.bandwidth_gb_s, 'en')} vs {_tb_s(h100.bandwidth_gb_s, 'en')} TB/s "
                                 f"for H100 SXM 80GB")
    notes = [block.text for block in report.blocks if isinstance(block, Text) and block.note]
    assert notes[-1].startswith("Source: the GPU catalog")
    assert render_comparison(comparison, "en") == render_report(report, PLAIN)
    text = render_comparison(comparison, "en")
    for row in table.rows:
        assert " · ".join(row) in text
    assert report.title == "GPU comparison: A100 80GB, H200 SXM 141GB, H100 SXM 80GB"


def test_html_escapes_catalog_text() -> None:
    comparison = compare_gpus(DATA, ["h100-sxm", "a100-80gb"], "inference")
    evil = dataclasses.replace(comparison.gpus[0], name="NVIDIA H100 <b>SXM</b> & Co",
                               interconnect="NVLink <900 GB/s>")
    html = render_comparison(dataclasses.replace(comparison, gpus=(evil, comparison.gpus[1])), "ru", HTML)
    assert "<b>SXM</b>" not in html and "H100 &lt;b&gt;SXM&lt;/b&gt; &amp; Co" in html
    assert "NVLink &lt;900 GB/s&gt;" in html
    assert html.startswith("<b>Сравнение GPU: ") and "<i>Источник: каталог GPU" in html


def test_the_example_price_list_is_said() -> None:
    comparison = compare_gpus(DATA, ["h100-sxm", "a100-80gb"], "general")
    text = render_comparison(comparison, "ru")
    assert ("Цены — из примерного прайс-листа, это не оферта." in text) == DATA.prices.current().example
    shown = render_comparison(dataclasses.replace(comparison, example_prices=False), "ru")
    assert "примерного прайс-листа" not in shown


def test_comparison_json() -> None:
    comparison = compare_gpus(DATA, ["h100-sxm", "v100-16gb"], "inference")
    document = comparison_json(comparison)
    json.dumps(document)  # serializable as it is
    h100 = CATALOG.get("h100-sxm")
    assert [gpu["id"] for gpu in document["gpus"]] == ["h100-sxm", "v100-16gb"]
    assert document["aspect"] == "inference" and document["leader"] == "h100-sxm"
    assert document["basis"] == "bandwidth_gb_s" and document["runner_up"] == "v100-16gb"
    assert document["ratio"] == format(comparison.ratio, "f") and isinstance(document["ratio"], str)
    assert document["gpus"][0]["bandwidth_gb_s"] == h100.bandwidth_gb_s
    assert document["gpus"][0]["on_demand_hourly"] == format(DATA.prices.on_demand("h100-sxm"), "f")
    assert document["gpus"][1]["on_demand_hourly"] is None and document["gpus"][1]["rented"] is False
    assert document["gpus"][1]["bf16_tflops"] is None and document["gpus"][1]["fp8_tflops"] is None
    assert document["currency"] == DATA.prices.current().currency
    assert document["by_aspect"]["training"]["basis"] == "fp16_tflops"
    assert document["by_aspect"]["memory"]["leader"] == "h100-sxm"
    general = comparison_json(compare_gpus(DATA, ["h200", "h100-sxm"], "general"))
    assert general["leader"] is None and general["basis"] is None and general["ratio"] is None
    assert general["by_aspect"]["training"]["tied"] == ["h200", "h100-sxm"]
