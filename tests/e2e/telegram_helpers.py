"""Module-scoped stub + bot process for the Telegram e2e modules (one bot start per module)."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from dev.telegram_stub import Call, TelegramStub
from tests.conftest import REPO_ROOT, BotProcess, bot_env
from tests.rag.support import shared_chroma_dir, shared_retriever


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def running_bot(ready: bool = True, configure: Callable[[TelegramStub], None] | None = None,
                      **env: str) -> AsyncIterator[tuple[TelegramStub, BotProcess]]:
    """A stub and a bot process on it; with ``ready`` (polling) it returns once the bot answers /start.

    ``configure`` sets the stub up before the bot starts (what getMe reports, which methods it knows).
    """
    stub = TelegramStub()
    if configure is not None:
        configure(stub)
    await stub.start()
    with tempfile.TemporaryDirectory(prefix="tg-e2e-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        (state / "models").symlink_to(REPO_ROOT / "var" / "models", target_is_directory=True)
        # the session's glossary index, copied: the bot's ingest finds it up to date instead of re-embedding
        shared_retriever()
        shutil.copytree(shared_chroma_dir(), state / "chroma")
        bot = BotProcess(bot_env(stub, state, **env), Path(tmp) / "bot.log")
        bot.start()
        try:
            if ready:
                stub.message_update("/start", chat_id=1, user_id=1)
                await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 1, timeout=240)
            yield stub, bot
        finally:
            await bot.stop()
            await stub.stop()


def group_message(stub: TelegramStub, text: str, *, chat_id: int, user_id: int = 200,
                  **kwargs: Any) -> int:
    return stub.message_update(text, chat_id=chat_id, user_id=user_id, chat_type="supergroup", **kwargs)


def refusal_text(stub: TelegramStub, chat_id: int, user_id: int, answer: Call) -> str:
    """What a refused button press told its presser: in a group the ephemeral message only they saw
    (bot/output/notices.py), otherwise the alert of the callback answer."""
    shown = stub.ephemeral_to(user_id, chat_id)
    return str(answer.params.get("text") or (shown[-1]["text"] if shown else ""))
