"""The bot's Bot API server in the test: telegram-test-api behind a thin aiohttp proxy.

Two gaps of the emulator stop any aiogram bot before its first update, so they are filled here (and only
these; the bot is not told it is being tested):

* ``getMe`` has no ``is_bot``, a required field of Telegram's ``User``: aiogram cannot parse the answer. The
  proxy adds ``is_bot: true``.
* ``getUpdates`` answers at once and ignores ``timeout`` (no long polling): a polling bot would spin through
  empty answers. The proxy holds the request, asking the emulator again, until there are updates or the
  timeout passes, as Telegram does.

Everything else passes through untouched, including the emulator's answer to a method it does not know
(``sendRichMessage``, ``sendPhoto``, ``setMyCommands``...): HTTP 500 with ``{"message": ...}``, JSON but not a
Bot API response (no ``ok``). The bot has to survive that as it would any server error. Every call is recorded
with its HTTP status, so a test can tell which way the bot went.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

POLL_INTERVAL_S = 0.05
MAX_HOLD_S = 5.0  # a held getUpdates ends by then anyway: a stopping bot is not kept waiting on it


@dataclass(frozen=True)
class ProxiedCall:
    method: str
    status: int
    body: bytes  # the emulator's answer, for the failure messages of a test


class BotApiProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[ProxiedCall] = []
        self.base_url = ""
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self._closing = asyncio.Event()

    async def start(self) -> str:
        self._http = aiohttp.ClientSession()
        app = web.Application(client_max_size=64 * 1024 * 1024)  # a chart upload passes through too
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    async def stop(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._http is not None:
            await self._http.close()
            self._http = None

    def called(self, method: str) -> list[ProxiedCall]:
        return [call for call in self.calls if call.method == method]

    async def _forward(self, request: web.Request, body: bytes) -> tuple[int, bytes, str]:
        assert self._http is not None
        headers = {"Content-Type": request.headers.get("Content-Type", "application/octet-stream")}
        async with self._http.request(request.method, f"{self.upstream}{request.path}", data=body,
                                      headers=headers) as resp:
            return resp.status, await resp.read(), resp.headers.get("Content-Type", "application/json")

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        body = await request.read()
        status, answer, content_type = await self._forward(request, body)
        if method == "getUpdates":
            status, answer, content_type = await self._long_poll(request, body, status, answer, content_type)
        elif method == "getMe" and status == 200:
            answer = _with_is_bot(answer)
        self.calls.append(ProxiedCall(method, status, answer))
        return web.Response(status=status, body=answer, headers={"Content-Type": content_type})

    async def _long_poll(self, request: web.Request, body: bytes, status: int, answer: bytes,
                         content_type: str) -> tuple[int, bytes, str]:
        """Ask again until there are updates, the bot's ``timeout`` passes, the bot hangs up or the test ends."""
        deadline = time.monotonic() + min(_timeout_of(body), MAX_HOLD_S)
        while (status == 200 and not _has_updates(answer) and time.monotonic() < deadline
               and not self._closing.is_set() and request.transport is not None
               and not request.transport.is_closing()):
            await asyncio.sleep(POLL_INTERVAL_S)
            status, answer, content_type = await self._forward(request, body)
        return status, answer, content_type


def _timeout_of(body: bytes) -> float:
    # aiogram sends this bot's requests as JSON (bot/transport/session.py); anything else: no long polling
    try:
        return float(json.loads(body or b"{}").get("timeout") or 0)
    except (ValueError, AttributeError):
        return 0.0


def _has_updates(answer: bytes) -> bool:
    try:
        return bool(json.loads(answer).get("result"))
    except (ValueError, AttributeError):
        return True  # not ours to judge: hand it to the bot


def _with_is_bot(answer: bytes) -> bytes:
    data: Any = json.loads(answer)
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data["result"].setdefault("is_bot", True)
    return json.dumps(data).encode()
