"""`anchorgpu quote` and `anchorgpu gpus`: the JSON contracts other tools parse, and the exit codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anchorgpu.cli import main
from infra.settings import get_settings

CONTRACT = {"quote_id": str, "gpu": str, "gpu_count": int, "pricing": str, "billable_hours": str,
            "currency": str, "unit_price": str, "lines": list, "total": str, "replayed": bool,
            "price_list_version": str}


@pytest.fixture(autouse=True)
def isolated_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DB_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in argv else out


def test_quote_json_contract_replay_and_conflict(capsys: pytest.CaptureFixture[str]) -> None:
    code, first = run(capsys, "quote", "h100 x8 2 weeks", "--key", "order-0001", "--user", "alice", "--json")
    assert code == 0
    for name, kind in CONTRACT.items():
        assert isinstance(first[name], kind), name
    assert (first["gpu"], first["gpu_count"], first["pricing"], first["billable_hours"]) == (
        "h100-sxm", 8, "on-demand", "336")
    assert first["total"] == "8037.12" and first["unit_price"] == "2.99" and first["replayed"] is False
    for line in first["lines"]:
        assert set(line) == {"description", "quantity", "unit_price", "amount"}
        assert all(isinstance(value, str) for value in line.values())
    assert sum(Decimal(line["amount"]) for line in first["lines"]) == Decimal(first["total"])

    code, again = run(capsys, "quote", "8x h100-sxm 14 days", "--key", "order-0001", "--user", "alice", "--json")
    assert code == 0 and again["replayed"] is True
    assert {k: v for k, v in again.items() if k != "replayed"} == {k: v for k, v in first.items()
                                                                      if k != "replayed"}

    code, conflict = run(capsys, "quote", "h100 x4 2 weeks", "--key", "order-0001", "--user", "alice", "--json")
    assert code == 3 and conflict["code"] == "idempotency_conflict"
    assert first["quote_id"] in conflict["error"] and "different" in conflict["error"]

    # the key belongs to alice: bob may use the same string for his own purchase
    code, bob = run(capsys, "quote", "h100 x4 2 weeks", "--key", "order-0001", "--user", "bob", "--json")
    assert code == 0 and bob["quote_id"] != first["quote_id"]


@pytest.mark.parametrize(("request_text", "hint"), [
    ("h1000 x8 2 weeks", "h100-sxm"), ("h100 x8", "2 weeks"), ("mi300x 2 weeks spot", "on-demand"),
])
def test_bad_input_exits_2_with_an_explanation(capsys: pytest.CaptureFixture[str], request_text: str,
                                               hint: str) -> None:
    code, payload = run(capsys, "quote", request_text, "--json")
    assert code == 2 and payload["error"] and hint in payload["suggestions"]


def test_bad_key_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, payload = run(capsys, "quote", "h100 x8 2 weeks", "--key", "no spaces allowed", "--json")
    assert code == 2 and "idempotency key" in payload["error"]


def test_text_output_prints_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "quote", "h100", "x8", "1", "month", "committed")
    assert code == 0 and "paid in full" in out and "Total: 12,916.80 USD" in out


def test_gpus_lists_the_catalog_with_prices(capsys: pytest.CaptureFixture[str]) -> None:
    code, document = run(capsys, "gpus", "--json")
    assert code == 0 and document["currency"] == "USD" and document["example_prices"] is True
    rows = {row["id"]: row for row in document["gpus"]}
    assert rows["h100-sxm"]["on_demand_hourly"] == "2.99" and rows["mi300x"]["spot_hourly"] is None
    assert rows["h100-sxm"]["terms"]["month"] == {"hours": 720, "discount_percent": "25",
                                                  "price_per_gpu": "1614.60"}
    assert rows["h100-sxm"]["terms"]["week"]["hours"] == 7 * 24
