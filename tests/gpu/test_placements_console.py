"""The console chat's placement commands, on the same services as the CLI (owner console:local)."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from anchorgpu.console import CONSOLE_OWNER, ConsoleChat
from app.services import Services
from infra.settings import get_settings


@pytest.fixture
async def chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[ConsoleChat, io.StringIO]]:
    monkeypatch.setenv("DB_URL", f"sqlite:///{tmp_path / 'console.db'}")
    get_settings.cache_clear()
    services = Services.create(get_settings())
    out = io.StringIO()
    yield ConsoleChat(services, lang="ru", out=out), out
    await services.aclose()
    get_settings.cache_clear()


async def say(chat: ConsoleChat, out: io.StringIO, line: str) -> str:
    out.seek(0)
    out.truncate()
    await chat.handle(line)
    return out.getvalue()


async def test_rent_list_stop_start_extend(chat: tuple[ConsoleChat, io.StringIO]) -> None:
    console, out = chat
    rented = await say(console, out, "/rent h100 x8 1 неделя committed")
    match = re.search(r"P-[A-Z2-7]{16}", rented)
    assert match and "моделирование" in rented
    pid = match.group(0)
    assert pid in await say(console, out, "/placements")
    stopped = await say(console, out, f"/stop_placement {pid}")
    assert "не приостанавливает оплаченный период" in stopped and "остановлено" in stopped
    assert "работает" in await say(console, out, f"/start_placement {pid}")
    assert "Продлено на 168 ч" in await say(console, out, f"/extend {pid} 1 неделя")
    [placement] = await console.services.placements.owned(CONSOLE_OWNER)
    assert placement.id == pid and placement.version == 4


async def test_bad_input_is_answered_not_raised(chat: tuple[ConsoleChat, io.StringIO]) -> None:
    console, out = chat
    assert "/rent" in await say(console, out, "/rent")
    assert "P-ABCDEFGHIJKLMNOP" in await say(console, out, "/stop_placement 42")
    assert "не найдено" in await say(console, out, "/start_placement P-AAAAAAAAAAAAAAAA")
    assert "/extend P-…" in await say(console, out, "/extend")
    assert "Q-" in await say(console, out, "/rent Q-AAAAAAAAAAAAAAAA")
