"""The soak benchmark (``anchorgpu bench soak``): its reply accounting on the real stub, and a 3-minute run.

The short run is part of the normal suite (CI): one bot process under the mixed load (commands, inline
queries, button presses, questions to the default model, 5 % redeliveries, 429/5xx from the stub) must lose
and duplicate nothing, log no error, and grow its RSS by less than 10 % after warm-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from dev.bench.soak import Ledger, Tracked, log_errors, soak_stub
from dev.telegram_stub import Fault
from tests.conftest import DEFAULT_MODEL, REPO_ROOT

TOKEN = "123456789:SOAK-unit"


async def test_only_replies_the_stub_accepted_count_and_a_second_one_is_a_duplicate() -> None:
    ledger = Ledger()
    stub = soak_stub(ledger)
    await stub.start()
    try:
        ledger.open(message_update := Tracked(1, "quote", ("chat", 42), 0.0))
        ledger.open(press := Tracked(2, "callback", ("callback", "cb-1"), 0.0))
        stub.inject("sendMessage", Fault(status=502))
        async with aiohttp.ClientSession() as session:
            async def call(method: str, **params: object) -> int:
                async with session.post(f"{stub.base_url}/bot{TOKEN}/{method}", json=params) as response:
                    return response.status

            assert await call("sendMessage", chat_id=42, text="first try") == 502
            assert message_update.replies == 0 and not message_update.answered.done()  # type: ignore[union-attr]
            keyboard = {"inline_keyboard": [[{"text": "A", "callback_data": "terms:cat:0:0:0"}]]}
            assert await call("sendMessage", chat_id=42, text="retried", reply_markup=keyboard) == 200
            assert await call("answerCallbackQuery", callback_query_id="cb-1") == 200
            assert await call("answerCallbackQuery", callback_query_id="cb-1") == 200
            assert await call("answerCallbackQuery", callback_query_id="someone-else") == 200
    finally:
        await stub.stop()
    assert message_update.replies == 1 and message_update.answered.done()  # type: ignore[union-attr]
    assert press.replies == 2  # the report counts it as duplicated
    assert ledger.unattributed == ["answerCallbackQuery someone-else"]
    # the chat's latest message with /terms buttons is where the next press goes
    assert stub.message(42, ledger.keyboards[(42, "terms")])["text"] == "retried"


def test_log_errors_counts_error_records_and_raw_tracebacks_not_warnings() -> None:
    log = "\n".join([
        json.dumps({"level": "WARNING", "logger": "bot.transport.retry", "msg": "sendMessage: 429, retrying in 1 s"}),
        json.dumps({"level": "ERROR", "logger": "bot.errors", "msg": "unhandled error ab12", "exc": "Traceback…"}),
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        json.dumps({"level": "INFO", "logger": "aiogram", "msg": "Traceback is only a word here"}),
    ])
    found = log_errors(log)
    assert len(found["errors"]) == 2 and found["tracebacks"] == 2
    assert found["warnings"] == {"bot.transport.retry: sendMessage: 429, retrying in 1 s": 1}


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason="the default model is not provisioned")
def test_three_minute_soak_loses_duplicates_and_leaks_nothing(tmp_path: Path, glossary_index: Path) -> None:
    out = tmp_path / "soak.json"
    completed = subprocess.run([sys.executable, "-m", "anchorgpu", "bench", "soak", "--minutes", "3",
                                "--index", str(glossary_index), "--out", str(out),
                                "--log", str(tmp_path / "bot.log")],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=1400)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(out.read_text())
    summary = {k: v for k, v in report.items() if k != "samples"}
    print(json.dumps(summary, indent=2, ensure_ascii=False))  # the figures go to the closing note
    # the load was what it says: every kind of update, redeliveries, faults that hit
    assert {"fit", "quote", "gpus", "help", "terms", "inline", "callback", "question"} <= set(
        report["updates_by_kind"]), summary
    assert report["redelivered"] and report["faults_hit"] > 0, summary
    assert len(report["samples"]) >= 10, summary
    assert report["lost"] == 0, summary
    assert report["duplicated"] == 0, summary
    assert report["errors"] == 0, summary
    assert report["bot_alive_at_end"], summary
    assert report["rss_growth_pct"] is not None and report["rss_growth_pct"] < 10, summary
