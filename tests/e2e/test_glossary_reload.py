"""Glossary updates without downtime: an entry added to entries.yaml while the bot runs is answered,
with no restart (the running process notices the edit and swaps the new index in)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from dev.telegram_stub import parse_html
from infra.settings import REPO_ROOT
from tests.e2e.telegram_helpers import running_bot

NEW_ENTRY = {
    "id": "999-teplokub", "term": "ТеплоКуб", "aliases": ["TeploCube"], "category": "hardware",
    "concept": "teplokub", "source": "999_reload_test.txt",
    "definition": "ТеплоКуб — шкаф жидкостного охлаждения на восемь серверов, отводящий до 120 кВт тепла.",
}
QUESTION = "что такое ТеплоКуб?"


async def _answer(stub, chat_id: int, text: str) -> str:  # type: ignore[no-untyped-def]
    before = len(stub.calls_to("sendMessage", chat_id))
    stub.message_update(text, chat_id=chat_id, user_id=chat_id, language_code="ru")
    calls = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == chat_id,
                                count=before + 1, timeout=240)
    return parse_html(str(calls[-1].params["text"]))


async def test_an_entry_added_while_the_bot_runs_is_answered_without_a_restart() -> None:
    with tempfile.TemporaryDirectory(prefix="reload-data-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(REPO_ROOT / "data", data)
        entries = data / "glossary" / "entries.yaml"
        async with running_bot(ANCHORGPU_DATA_DIR=str(data), RAG_RELOAD_INTERVAL_S="1",
                               LLM_MAX_TOKENS="40", TELEGRAM_HEALTH_PORT="0") as (stub, bot):
            first = await _answer(stub, 7101, QUESTION)
            assert "120 кВт" not in first and "шкаф жидкостного охлаждения" not in first

            document = yaml.safe_load(entries.read_text(encoding="utf-8"))
            document["entries"].append(NEW_ENTRY)
            staged = entries.with_suffix(".tmp")
            staged.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
            staged.replace(entries)
            edited = time.monotonic()

            deadline = edited + 60  # the promise: within a minute
            while "glossary reloaded" not in bot.log():
                assert time.monotonic() < deadline, bot.log()[-3000:]
                await asyncio.sleep(0.5)

            second = await _answer(stub, 7102, QUESTION)
            # a definitional question is answered with the entry's own words, cited
            assert NEW_ENTRY["definition"].rstrip(".") in second, second
            # cited from the new entry (its document has no title yet: shown as the glossary, not as a file name)
            assert "ТеплоКуб — глоссарий AnchorGPU" in second, second
            assert bot.proc is not None and bot.proc.poll() is None, "the same process, never restarted"
