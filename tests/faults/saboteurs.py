"""Misbehaving dependencies for the fault suite: an OpenAI-compatible LLM server that hangs, fails, sends
garbage or drops the connection on command, a TCP proxy in front of PostgreSQL that can be cut, and a
private Redis server to SIGKILL and start again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Literal

from aiohttp import web

LLMMode = Literal["ok", "hang", "error500", "garbage", "drop", "slow"]
# the entry's own words (its rendering): the verifier shows only a sentence that restates one
# (rag.verification.alignment)
OK_ANSWER = ("HBM is a type of GPU memory with vertically stacked chips [1].",)


class SaboteurLLM:
    """``/v1/models`` always answers (the bot checks it at start-up); ``/v1/chat/completions`` follows
    :attr:`mode`. :meth:`stop` and :meth:`start` on the same port simulate a crash and a restart."""

    def __init__(self) -> None:
        self.mode: LLMMode = "ok"
        self.requests = 0
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        if not self.port:
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _models(self, _: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "saboteur", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        await request.read()
        if self.mode == "hang":
            await asyncio.sleep(3600)
        if self.mode == "error500":
            return web.json_response({"error": {"message": "CUDA error: out of memory"}}, status=500)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if self.mode == "garbage":
            await response.write(b"data: {\"choices\": [{\"delta\": {\"content\": \"HB\"}}]}\n\n")
            await response.write(b"data: {this is not json\n\n")
            await response.write(b"\x00\xff\xfe garbage \n\n")
            return response
        if self.mode == "drop":
            await response.write(b"data: {\"choices\": [{\"delta\": {\"content\": \"HBM is\"}}]}\n\n")
            assert request.transport is not None
            request.transport.close()
            return response
        for word in OK_ANSWER[0].split(" "):
            chunk = {"choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if self.mode == "slow":
                await asyncio.sleep(0.5)
        done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 12}}
        await response.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        return response


class CuttableProxy:
    """A TCP proxy to ``target``; :meth:`cut` drops every connection and refuses new ones until
    :meth:`restore` — the database "goes down" for the bot while the real server keeps running."""

    def __init__(self, target_host: str = "127.0.0.1", target_port: int = 5432) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(Exception):
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}

    async def cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._writers.clear()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5)

    async def restore(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)

    async def stop(self) -> None:
        await self.cut()


REDIS_SERVER = "/usr/bin/redis-server"


class PrivateRedis:
    """A ``redis-server`` of the test's own (never the shared one on 6379): a random free port in 6400-6499,
    no persistence (``--save ''``, no AOF), its files in ``workdir``. :meth:`kill` is a SIGKILL;
    :meth:`start` after it comes back empty on the same port, like a Redis restarted without its AOF."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _free_port(self) -> int:
        for port in random.sample(range(6400, 6500), 100):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
        raise RuntimeError("no free port in 6400-6499 for a private Redis")

    def start(self, timeout_s: float = 10.0) -> None:
        self.port = self.port or self._free_port()
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / "redis.log").open("ab")
        self.proc = subprocess.Popen([REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.workdir)],
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {(self.workdir / 'redis.log').read_text()[-500:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None
