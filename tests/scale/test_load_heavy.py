"""The heavy load run (``anchorgpu bench load``), only with ``ANCHORGPU_HEAVY=1``: its JSON must show
0 lost, 0 duplicated, 0 delivery errors, every valid quote stored exactly once, and a replica under 2 GiB
with the default model in process. Throughput figures are reported, not asserted (docs/operations.md, Sizing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.heavy, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(1800),
              pytest.mark.skipif(os.environ.get("ANCHORGPU_HEAVY") != "1", reason="set ANCHORGPU_HEAVY=1")]


def test_load_bench_loses_and_duplicates_nothing() -> None:
    result = subprocess.run([sys.executable, "-m", "anchorgpu", "bench", "load", "--chats", "50", "--messages",
                             "6", "--rss-probe"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=1700,
                            check=True)
    report = json.loads(result.stdout)
    print(json.dumps(report, indent=2))  # the figures go to the closing note
    for phase in ("one_replica", "two_replicas"):
        assert report[phase]["lost"] == 0 and report[phase]["duplicated"] == 0, report[phase]
        assert report[phase]["errors"] == 0, report[phase]
        assert report[phase]["quotes_stored"] == report[phase]["quotes_expected"], report[phase]
    assert report["rss_probe_default_model"]["status"] == 200
    assert report["rss_probe_default_model"]["rss_mb_after_answer"] <= 2048
