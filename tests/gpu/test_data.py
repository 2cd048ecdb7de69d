"""GpuData: one owner of gpus.yaml, models.yaml and prices.yaml. After an operator edits the price list,
/quote, /fit's cheapest configurations, /gpus and price questions all see the new prices at once."""

from __future__ import annotations

import os
import shutil
from decimal import Decimal
from pathlib import Path

import yaml

from app.intents import IntentClassifier
from app.views.gpus import gpus_document, render_gpus
from app.views.prices import render_price_answer
from gpu.data import GpuData
from gpu.fit.service import FitService
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.conftest import DATA_DIR


def _copy_data(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    target.mkdir()
    for name in ("gpus.yaml", "models.yaml", "prices.yaml"):
        shutil.copy(DATA_DIR / name, target / name)
    return target


def test_a_price_edit_reaches_every_reader(tmp_path: Path) -> None:
    data_dir = _copy_data(tmp_path)
    data = GpuData(data_dir)
    fit = FitService(data)
    intents = IntentClassifier(data, fit, RuleBook(DATA_DIR, glossary_file(DATA_DIR)))
    before = data.prices.on_demand("l40s")
    assert before is not None and data.prices.version == 1
    prices = data_dir / "prices.yaml"
    document = yaml.safe_load(prices.read_text(encoding="utf-8"))
    document["gpus"]["l40s"].update(on_demand="0.01", spot=None)
    prices.write_text(yaml.safe_dump(document), encoding="utf-8")
    stat = prices.stat()
    os.utime(prices, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    assert data.prices.on_demand("l40s") == Decimal("0.01") and data.prices.version == 2
    assert fit.fit("llama-3.1-70b q4_k_m").cheapest[0].gpu_id == "l40s"  # the cheapest by the new price
    assert "0.01" in render_gpus(data, "en")
    assert gpus_document(data)["gpus"][[g["id"] for g in gpus_document(data)["gpus"]].index("l40s")][
        "on_demand_hourly"] == "0.01"
    answer = render_price_answer(intents.classify("how much does an L40S cost per hour?"), data, "en")
    assert "0.01" in answer


def test_a_broken_price_edit_keeps_serving_the_last_good_list(tmp_path: Path) -> None:
    data_dir = _copy_data(tmp_path)
    data = GpuData(data_dir)
    good = data.prices.current()
    prices = data_dir / "prices.yaml"
    prices.write_text("gpus: [this is not a price list", encoding="utf-8")
    stat = prices.stat()
    os.utime(prices, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert data.prices.current() is good
