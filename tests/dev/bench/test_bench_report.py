"""The benchmarks' one ``--out`` (dev/bench/_report.py): the printed JSON is unchanged, the file gets the run."""

from __future__ import annotations

import argparse
import json
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from anchorgpu.cli import main
from dev.bench._report import add_out_argument, emit

REPORT = {"benchmark": "demo", "median_ms": 1.25, "text": "потянет ли 3090", "path": Path("/tmp/x")}


def printed(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out


def test_without_out_it_only_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert emit("demo", REPORT, None) is None
    out = printed(capsys)
    assert out == '{"benchmark": "demo", "median_ms": 1.25, "text": "потянет ли 3090", "path": "/tmp/x"}\n'


def test_a_folder_gets_the_dated_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = datetime.now(UTC).date()
    written = emit("demo", REPORT, tmp_path)
    after = datetime.now(UTC).date()
    assert written is not None and written.parent == tmp_path
    assert written.name in {f"{day:%Y-%m-%d}-demo.json" for day in (before, after)}
    document = json.loads(written.read_text(encoding="utf-8"))
    assert json.loads(printed(capsys)) == {k: v for k, v in document.items() if k != "run"}
    assert "run" not in REPORT  # the caller's report is not changed


def test_a_missing_folder_ending_with_a_slash_is_created(tmp_path: Path) -> None:
    written = emit("demo", REPORT, f"{tmp_path}/new/folder/")
    assert written is not None and written.parent == tmp_path / "new" / "folder"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-demo\.json", written.name)


def test_an_explicit_file_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "deep" / "figures.json"
    assert emit("demo", REPORT, str(target)) == target
    text = target.read_text(encoding="utf-8")
    assert "потянет ли 3090" in text and text.endswith("}\n") and '\n  "run": {' in text  # indented, not escaped
    document = json.loads(text)
    assert document["path"] == "/tmp/x" and document["median_ms"] == 1.25
    assert json.loads(printed(capsys))["text"] == "потянет ли 3090"


def test_the_run_metadata(tmp_path: Path) -> None:
    written = emit("demo", REPORT, tmp_path / "r.json")
    assert written is not None
    run = json.loads(written.read_text(encoding="utf-8"))["run"]
    assert set(run) == {"benchmark", "date", "commit", "python", "cpus", "machine"}
    assert run["benchmark"] == "demo" and run["python"] == platform.python_version()
    assert run["machine"] == platform.machine() and isinstance(run["cpus"], int)
    assert datetime.fromisoformat(run["date"]).tzinfo is not None
    assert run["commit"] is None or re.fullmatch(r"[0-9a-f]{4,40}", run["commit"])


def test_without_git_the_commit_is_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    written = emit("demo", REPORT, tmp_path / "r.json")
    assert written is not None
    assert json.loads(written.read_text(encoding="utf-8"))["run"]["commit"] is None


def test_add_out_argument() -> None:
    parser = argparse.ArgumentParser()
    add_out_argument(parser)
    assert parser.parse_args([]).out is None
    assert parser.parse_args(["--out", "benchmarks/"]).out == "benchmarks/"


@pytest.mark.parametrize("name", ["answers", "bot", "fit", "llm", "load", "quote", "retrieval", "routing", "soak",
                                  "verifier"])
def test_every_benchmark_takes_out(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", name, "--help"])
    assert "--out PATH" in printed(capsys)


def test_bench_fit_writes_its_dated_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "fit", "--rounds", "1", "--out", f"{tmp_path}/"]) == 0
    stdout = json.loads(printed(capsys))
    (written,) = tmp_path.glob("*-fit.json")
    document = json.loads(written.read_text(encoding="utf-8"))
    assert document.pop("run")["benchmark"] == "fit" and "run" not in stdout
    assert document.keys() == stdout.keys() and document["benchmark"] == "fit"
