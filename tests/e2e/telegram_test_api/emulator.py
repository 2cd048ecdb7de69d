"""telegram-test-api as a node subprocess, and its client HTTP API (``/sendCommand``, ``/getUpdatesHistory``)
playing the user.

The messages are built as the package's own ``TelegramClient.makeCommand`` builds them (its ``botToken`` and
``date`` fields, a ``bot_command`` entity), plus ``language_code`` so the bot's language is not a guess.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import IO, Any

import aiohttp

from tests.conftest import REPO_ROOT
from tests.e2e.telegram_helpers import free_port

NODE_MODULES = REPO_ROOT / "var" / "npm" / "node_modules"  # where scripts/setup.sh installs it
PACKAGE = NODE_MODULES / "telegram-test-api"
SERVER_JS = Path(__file__).with_name("server.js")
START_TIMEOUT_S = 20.0


def unavailable() -> str | None:
    """Why the emulator cannot run here (a reason to skip), or None."""
    if shutil.which("node") is None:
        return "node is not installed: telegram-test-api (npm) cannot run"
    if not (PACKAGE / "package.json").is_file():
        return f"telegram-test-api is not installed in {NODE_MODULES}: run scripts/setup.sh (needs npm)"
    return None


class Emulator:
    def __init__(self, token: str, log_path: Path) -> None:
        self.token = token
        self.log_path = log_path
        self.api_url = ""
        self._proc: asyncio.subprocess.Process | None = None
        self._log: IO[bytes] | None = None
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._log = self.log_path.open("ab")
        # stdin stays open: server.js stops when it closes, so a killed test leaves no server behind
        self._proc = await asyncio.create_subprocess_exec(
            "node", str(SERVER_JS), str(NODE_MODULES), str(free_port()),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self._log)
        assert self._proc.stdout is not None
        try:
            line = await asyncio.wait_for(self._proc.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            line = b""
        if not line:
            await self.stop()
            raise RuntimeError(f"telegram-test-api did not start:\n{self.log()}")
        self.api_url = str(json.loads(line)["apiURL"])
        self._http = aiohttp.ClientSession()

    async def stop(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._proc is not None and self._proc.returncode is None:
            self._proc.terminate()
            try:
                await asyncio.wait_for(self._proc.wait(), 10)
            except TimeoutError:
                self._proc.kill()
                await self._proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    async def _post(self, route: str, body: dict[str, Any]) -> Any:
        assert self._http is not None, "start() first"
        async with self._http.post(f"{self.api_url}/{route}", json=body) as resp:
            resp.raise_for_status()
            return (await resp.json())["result"]

    async def send_command(self, text: str, *, chat_id: int, user_id: int, language_code: str = "en") -> None:
        """A user sends ``text`` (a /command) in their private chat with the bot."""
        command = text.split(maxsplit=1)[0]
        user = {"id": user_id, "first_name": "Test", "username": f"user{user_id}", "is_bot": False,
                "language_code": language_code}
        message = {
            "botToken": self.token, "date": int(time.time()), "text": text, "from": user,
            "chat": {"id": chat_id, "first_name": "Test", "username": f"user{user_id}", "type": "private"},
            "entities": [{"offset": 0, "length": len(command), "type": "bot_command"}],
        }
        await self._post("sendCommand", message)

    async def bot_messages(self, chat_id: int) -> list[dict[str, Any]]:
        """What the bot sent to the chat (through the emulator's sendMessage, the only send it knows), as the
        request fields it stored: ``text``, ``parse_mode``, ``reply_markup``..."""
        history = await self._post("getUpdatesHistory", {"token": self.token})
        # the history mixes the user's updates (message.chat) with the bot's sends (message.chat_id)
        return [item["message"] for item in history
                if "chat_id" in item.get("message", {}) and str(item["message"]["chat_id"]) == str(chat_id)]

    async def wait_bot_messages(self, chat_id: int, count: int = 1, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The bot's messages to the chat once there are ``count``; fewer after ``timeout`` s: what there is."""
        deadline = time.monotonic() + timeout
        messages = await self.bot_messages(chat_id)
        while len(messages) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            messages = await self.bot_messages(chat_id)
        return messages
