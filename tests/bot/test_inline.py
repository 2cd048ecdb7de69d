"""Inline mode (bot/routers/inline.py) through the Bot API stub over HTTP: the cards come from the glossary the
bot serves now, so an entry edited while the bot runs is shown with its new text at once."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiogram import Bot
from aiogram.types import InlineQuery

from bot.routers.inline import on_inline
from dev.telegram_stub import TelegramStub, parse_html
from rag.glossary import glossary_file
from rag.retrieval.reload import GlossaryReloader
from rag.retrieval.retriever import HybridRetriever
from tests.conftest import DATA_DIR
from tests.rag.support import rag_settings

ENTRY = "000-nvlink"
OLD_TEXT = "Высокоскоростная межсоединительная шина NVIDIA между GPU с пропускной способностью до 900 ГБ/с."
NEW_TEXT = "Межсоединение NVIDIA между GPU одного сервера; пятое поколение даёт до 1,8 ТБ/с на GPU."


@pytest.fixture
def live(tmp_path: Path) -> tuple[GlossaryReloader, Path]:
    """A retriever over a copy of the real glossary (names and BM25: no embedding to wait for) and the
    reloader that follows that copy's entries.yaml, as the running bot has them."""
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    glossary = glossary_file(data)
    retriever = HybridRetriever(glossary.get(), None, None)
    reloader = GlossaryReloader(rag_settings(tmp_path / "chroma").rag, glossary, retriever, interval_s=0.1)
    return reloader, data / "glossary" / "entries.yaml"


def _rewrite_definition(path: Path, entry_id: str, definition: str) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    [raw] = [raw for raw in document["entries"] if raw["id"] == entry_id]
    raw["definition"] = definition
    staged = path.with_suffix(".tmp")  # written beside and renamed, as an editor or a deploy does
    staged.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    staged.replace(path)


async def _inline(stub: TelegramStub, bot: Bot, retriever: HybridRetriever, text: str) -> list[dict[str, Any]]:
    """What Telegram was sent for one ``@bot text`` query."""
    query = InlineQuery.model_validate(
        {"id": f"iq-{time.monotonic_ns()}", "query": text, "offset": "",
         "from": {"id": 4004, "is_bot": False, "first_name": "T", "language_code": "ru"}}, context={"bot": bot})
    before = len(stub.calls_to("answerInlineQuery"))
    await on_inline(query, retriever, "ru")
    calls = stub.calls_to("answerInlineQuery")
    assert len(calls) == before + 1
    results: list[dict[str, Any]] = calls[-1].params["results"]
    return results


def _card(results: list[dict[str, Any]], entry_id: str) -> str:
    [card] = [r for r in results if r["id"] == entry_id]
    return parse_html(card["input_message_content"]["message_text"]) + "\n" + card["description"]


async def test_an_entry_edited_while_the_bot_runs_is_shown_with_its_new_text(
        stub: TelegramStub, api_bot: Bot, live: tuple[GlossaryReloader, Path]) -> None:
    reloader, entries = live
    retriever = reloader.retriever
    first = await _inline(stub, api_bot, retriever, "NVLink")
    assert first[0]["id"] == ENTRY and OLD_TEXT in _card(first, ENTRY)
    assert "Источник: Глоссарий ML и GPU" in _card(first, ENTRY), "the seed's title, not its file name"
    assert ".txt" not in _card(first, ENTRY)
    assert await _inline(stub, api_bot, retriever, "nvlink ") == first, "a repeat is the same answer"

    _rewrite_definition(entries, ENTRY, NEW_TEXT)
    assert reloader.check() is not None, "the edit was picked up"
    after = _card(await _inline(stub, api_bot, retriever, "NVLink"), ENTRY)
    assert NEW_TEXT in after and OLD_TEXT not in after, after


def test_every_reload_gives_the_served_glossary_a_new_version(live: tuple[GlossaryReloader, Path]) -> None:
    """What the caches of glossary content are keyed by: it changes with every reload and never repeats."""
    reloader, entries = live
    retriever = reloader.retriever
    first = retriever.version
    assert reloader.check() is None and retriever.version == first, "no edit, the same version"
    _rewrite_definition(entries, ENTRY, NEW_TEXT)
    assert reloader.check() is not None
    second = retriever.version
    _rewrite_definition(entries, ENTRY, OLD_TEXT)  # the old text again is still a new version
    assert reloader.check() is not None
    assert len({first, second, retriever.version}) == 3
    other = HybridRetriever(retriever.entries, None, None)
    assert other.version not in {first, second, retriever.version}, "two retrievers never share a version"
