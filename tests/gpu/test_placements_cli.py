"""`anchorgpu rent / placements / stop / start / extend`: the JSON objects and the exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anchorgpu.cli import main
from infra.settings import get_settings
from tests.conftest import REPO_ROOT

RENT_CONTRACT = {"placement_id": str, "status": str, "started_at": str, "paid_until": (str, type(None)),
                 "quote_id": (str, type(None)), "total": str, "replayed": bool}


@pytest.fixture(autouse=True)
def isolated_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    db = tmp_path / "cli.db"
    monkeypatch.setenv("DB_URL", f"sqlite:///{db}")
    monkeypatch.delenv("ANCHORGPU_CLOCK_OFFSET", raising=False)
    monkeypatch.delenv("ANCHORGPU_CLOCK_FILE", raising=False)
    get_settings.cache_clear()
    yield db
    get_settings.cache_clear()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, json.loads(captured.out) if "--json" in argv else captured.out + captured.err


def test_rent_json_contract_replay_and_conflict(capsys: pytest.CaptureFixture[str]) -> None:
    code, first = run(capsys, "rent", "h100 x8 1 week committed", "--key", "order-0001", "--user", "alice",
                      "--json")
    assert code == 0
    for name, kind in RENT_CONTRACT.items():
        assert isinstance(first[name], kind), name
    assert first["status"] == "running" and first["replayed"] is False and first["total"] == "3536.32"
    assert first["started_at"].endswith("Z") and first["paid_until"].endswith("Z")
    code, again = run(capsys, "rent", "8x h100-sxm 7 days committed", "--key", "order-0001", "--user", "alice",
                      "--json")
    assert code == 0 and again["replayed"] is True and again["placement_id"] == first["placement_id"]
    code, conflict = run(capsys, "rent", "h100 x4 1 week committed", "--key", "order-0001", "--user", "alice",
                         "--json")
    assert code == 3 and conflict["code"] == "idempotency_conflict"
    code, listed = run(capsys, "placements", "--user", "alice", "--json")
    assert code == 0 and [p["placement_id"] for p in listed["placements"]] == [first["placement_id"]]
    assert {"placement_id", "status", "started_at", "paid_until", "gpu", "gpu_count"} <= set(listed["placements"][0])
    assert listed["placements"][0]["gpu"] == "h100-sxm" and listed["placements"][0]["gpu_count"] == 8
    code, other = run(capsys, "placements", "--user", "bob", "--json")
    assert code == 0 and other == {"placements": []}


def test_rent_from_a_stored_quote(capsys: pytest.CaptureFixture[str]) -> None:
    code, quote = run(capsys, "quote", "h100 x8 1 month committed", "--user", "alice", "--json")
    assert code == 0
    code, rented = run(capsys, "rent", "--quote", quote["quote_id"], "--key", "q-rent-1", "--user", "alice",
                       "--json")
    assert code == 0 and rented["quote_id"] == quote["quote_id"] and rented["total"] == quote["total"]
    code, stranger = run(capsys, "rent", "--quote", quote["quote_id"], "--user", "mallory", "--json")
    assert code == 4 and stranger["code"] == "not_found"
    code, bad = run(capsys, "rent", "--quote", "Q-nope", "--user", "alice", "--json")
    assert code == 2 and "error" in bad
    code, both = run(capsys, "rent", "h100 x1 1 day", "--quote", quote["quote_id"], "--json")
    assert code == 2 and "error" in both


def test_stop_start_extend_and_their_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    _, rented = run(capsys, "rent", "h100 x8 1 week committed", "--user", "alice", "--json")
    pid = rented["placement_id"]
    code, stopped = run(capsys, "stop", pid, "--user", "alice", "--json")
    assert code == 0 and stopped["status"] == "stopped" and stopped["paid_until"] == rented["paid_until"]
    assert stopped["total"] == rented["total"]  # nothing refunded
    code, text = run(capsys, "stop", pid, "--user", "alice", "--lang", "ru")
    assert code == 0 and "не приостанавливает оплаченный период" not in text  # already stopped: said so
    code, started = run(capsys, "start", pid, "--user", "alice", "--json")
    assert code == 0 and started["status"] == "running"
    code, text = run(capsys, "stop", pid, "--user", "alice")
    assert code == 0 and "does not pause the paid period" in text
    code, extended = run(capsys, "extend", pid, "2 weeks", "--key", "ext-0001", "--user", "alice", "--json")
    assert code == 0 and extended["extension"] == {"hours": 336, "total": "7072.64"}
    assert extended["paid_until"] > rented["paid_until"]
    for argv, expected in (
            (("stop", pid, "--user", "bob"), 4),                       # not yours
            (("start", "P-AAAAAAAAAAAAAAAA", "--user", "alice"), 4),    # no such placement
            (("stop", "not-an-id", "--user", "alice"), 2),             # unknown id format
            (("extend", pid, "-1 week", "--user", "alice"), 2),        # negative
            (("extend", pid, "whenever", "--user", "alice"), 2),       # unparseable
            (("extend", pid, "1 week", "--key", "bad key!", "--user", "alice"), 2),  # malformed key
            (("extend", pid, "1 week", "--key", "ext-0001", "--user", "alice"), 3),  # other parameters
            (("extend", pid, "2 weeks", "--key", "ext-0001", "--user", "alice"), 0),  # replay
    ):
        code, payload = run(capsys, *argv, "--json")
        assert code == expected, (argv, payload)
        assert ("error" in payload) == (expected != 0)


def test_the_clock_setting_moves_placements_past_their_paid_period(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _, rented = run(capsys, "rent", "l4 x1 1 day committed", "--user", "alice", "--json")
    monkeypatch.setenv("ANCHORGPU_CLOCK_OFFSET", "25h")
    get_settings.cache_clear()
    code, listed = run(capsys, "placements", "--user", "alice", "--json")
    assert code == 0 and listed["placements"][0]["status"] == "expired"
    code, refused = run(capsys, "start", rented["placement_id"], "--user", "alice", "--json")
    assert code == 3 and refused["code"] == "invalid_state" and refused["reason"] == "paid_period_over"
    fixed = tmp_path / "now.txt"
    fixed.write_text("2020-01-01T00:00:00Z")
    monkeypatch.delenv("ANCHORGPU_CLOCK_OFFSET")
    monkeypatch.setenv("ANCHORGPU_CLOCK_FILE", str(fixed))
    get_settings.cache_clear()
    code, listed = run(capsys, "placements", "--user", "alice", "--json")
    assert code == 0 and listed["placements"][0]["as_of"] == "2020-01-01T00:00:00Z"
    monkeypatch.setenv("ANCHORGPU_CLOCK_OFFSET", "soon")
    get_settings.cache_clear()
    assert main(["placements", "--user", "alice", "--json"]) == 2  # a bad setting: one line, exit 2
    assert "ANCHORGPU_CLOCK_OFFSET" in capsys.readouterr().err


@pytest.mark.long
def test_concurrent_processes_with_one_key_make_one_placement(isolated_db: Path) -> None:
    env = {**os.environ, "DB_URL": f"sqlite:///{isolated_db}", "PYTHONPATH": str(REPO_ROOT)}
    argv = [sys.executable, "-m", "anchorgpu", "rent", "h100 x8 1 week committed", "--key", "proc-key-1",
            "--user", "alice", "--json"]
    subprocess.run([sys.executable, "-m", "anchorgpu", "placements", "--json"], env=env, check=True,
                   capture_output=True)  # create the schema first: the race is about the key, not DDL
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outputs = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert len({out["placement_id"] for out in outputs}) == 1
    assert sorted(out["replayed"] for out in outputs) == [False, True, True, True]
