"""Several bot replicas on one machine, wired like production: the harness of ``bench load`` and tests/scale.

* bot replicas are real ``anchorgpu run`` processes in webhook mode; the caller plays Telegram and the load
  balancer by POSTing updates to ``/telegram/webhook`` (with the secret header) of the replica it picks;
* PostgreSQL: a scratch database created on the local server and dropped afterwards;
* Redis: one scratch database number, FLUSHDB'd before and after (only that number);
* Chroma in server mode (``chroma run`` on loopback) and ``python -m llama_cpp.server`` on loopback.

Nothing here is imported by the bot itself; it needs the repository checkout (the Telegram stub is
``dev/telegram_stub.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import aiohttp

from infra.settings import REPO_ROOT

TOKEN = "123456789:SCALE-token-for-the-local-stub-only"
SECRET = "scale-test-secret"
WEBHOOK_PATH = "/telegram/webhook"
SMALL_MODEL = REPO_ROOT / "var" / "models" / "smollm2-135m-instruct-q4_1.gguf"
DEFAULT_MODEL = REPO_ROOT / "var" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), in MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


class Managed:
    """A child process with a log file; stop() is SIGTERM then SIGKILL, kill() is SIGKILL at once."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.log_path = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=REPO_ROOT)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    async def stop(self, timeout: float = 20.0) -> None:
        if not self.alive():
            return
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:  # noqa: ASYNC110 - polling a child
            await asyncio.sleep(0.1)
        self.kill()

    async def wait_http(self, url: str, timeout: float, ok: tuple[int, ...] = (200,)) -> None:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if not self.alive():
                    raise RuntimeError(f"{self.name} exited; log tail:\n{self.log()[-3000:]}")
                with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
                    async with session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as response:
                        if response.status in ok:
                            return
                await asyncio.sleep(0.5)
        raise TimeoutError(f"{self.name} not ready at {url} within {timeout:.0f}s; log tail:\n{self.log()[-3000:]}")


async def start_chroma(folder: Path, logs: Path) -> tuple[Managed, str]:
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - once, before the server starts
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    server = Managed("chroma", [str(VENV_BIN / "chroma"), "run", "--path", str(folder), "--host", "127.0.0.1",
                                "--port", str(port)], env, logs / "chroma.log")
    server.start()
    url = f"http://127.0.0.1:{port}"
    await server.wait_http(f"{url}/api/v2/heartbeat", 120)
    return server, url


async def start_llama_server(model: Path, logs: Path, n_ctx: int = 2048) -> tuple[Managed, str]:
    port = free_port()
    server = Managed("llama-server", [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
                                      "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)],
                     dict(os.environ), logs / "llama_server.log")
    server.start()
    url = f"http://127.0.0.1:{port}/v1"
    await server.wait_http(f"{url}/models", 300)
    return server, url


@contextlib.asynccontextmanager
async def scratch_postgres(base_url: str, tag: str = "scale") -> AsyncIterator[str]:
    """A fresh database on the server of ``base_url`` (postgresql://user@host:port/db), dropped after."""
    import asyncpg

    parsed = urlparse(base_url)
    name = f"anchorgpu_{tag}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(base_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield urlunparse(parsed._replace(path=f"/{name}"))
    finally:
        admin = await asyncpg.connect(base_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@contextlib.asynccontextmanager
async def scratch_redis(url: str) -> AsyncIterator[str]:
    """The Redis database of ``url`` (redis://host:port/N), emptied before and after (only that number)."""
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        await client.flushdb()
        yield url
    finally:
        with contextlib.suppress(Exception):
            await client.flushdb()
        await client.aclose()


def replica_env(*, stub_url: str, state: Path, port: int, db_url: str, redis_url: str | None,
                chroma_url: str | None, llm_base_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "LLM_", "RAG_", "DB_"))}
    env.update({
        "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": stub_url, "TELEGRAM_MODE": "webhook",
        "TELEGRAM_WEBHOOK_URL": f"https://bot.example.com{WEBHOOK_PATH}", "TELEGRAM_WEBHOOK_SECRET": SECRET,
        "TELEGRAM_WEBHOOK_HOST": "127.0.0.1", "TELEGRAM_WEBHOOK_PORT": str(port),
        "ANCHORGPU_STATE_DIR": str(state), "DB_URL": db_url, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1", "ANCHORGPU_LOG_LEVEL": "WARNING",
        "LLM_MODEL_PATH": str(SMALL_MODEL),
    })
    if redis_url:
        env["DB_REDIS_URL"] = redis_url
    if chroma_url:
        env["RAG_CHROMA_URL"] = chroma_url
    else:
        env["RAG_CHROMA_PATH"] = str(state / "chroma")
    if llm_base_url:
        env["LLM_BASE_URL"] = llm_base_url
    env.update(extra)
    return env


class Replica(Managed):
    """One bot process in webhook mode; :meth:`deliver` is Telegram POSTing an update to it."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        super().__init__(name, [sys.executable, "-m", "anchorgpu", "run"], env, log)
        self.port = int(env["TELEGRAM_WEBHOOK_PORT"])
        self.base = f"http://127.0.0.1:{self.port}"

    async def wait_ready(self, timeout: float = 600) -> None:
        await self.wait_http(f"{self.base}/healthz", timeout, ok=(200,))

    async def deliver(self, session: aiohttp.ClientSession, update: dict[str, Any], timeout: float = 150) -> int:
        """POST one update; the status code, or 599 when the connection failed (Telegram retries those)."""
        try:
            async with session.post(f"{self.base}{WEBHOOK_PATH}", json=update,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                await response.read()
                return response.status
        except (TimeoutError, aiohttp.ClientError, OSError):
            return 599

    def rss_mb(self) -> float:
        return rss_mb(self.pid) if self.alive() else 0.0


async def start_replicas(count: int, *, stub_url: str, workdir: Path, db_url: str, redis_url: str | None,
                         chroma_url: str | None, llm_base_url: str | None, **extra: str) -> list[Replica]:
    """Start ``count`` replicas; the first one alone (it may build the shared index), the rest together."""
    replicas = []
    for index in range(count):
        state = workdir / f"replica{index}"
        state.mkdir(parents=True, exist_ok=True)
        models = state / "models"
        if not models.exists():
            models.symlink_to(REPO_ROOT / "var" / "models", target_is_directory=True)
        env = replica_env(stub_url=stub_url, state=state, port=free_port(), db_url=db_url, redis_url=redis_url,
                          chroma_url=chroma_url, llm_base_url=llm_base_url, **extra)
        replicas.append(Replica(f"replica{index}", env, workdir / f"replica{index}.log"))
    replicas[0].start()
    await replicas[0].wait_ready()
    for replica in replicas[1:]:
        replica.start()
    await asyncio.gather(*(replica.wait_ready() for replica in replicas[1:]))
    return replicas


def private_message(update_id: int, text: str, *, chat_id: int, message_id: int, language_code: str = "en",
                    entities: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_id": message_id, "date": int(time.time()), "text": text,
        "chat": {"id": chat_id, "type": "private", "first_name": "Load"},
        "from": {"id": chat_id, "is_bot": False, "first_name": "Load", "language_code": language_code},
    }
    if entities and text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0,
                                "length": len(text.split()[0].encode("utf-16-le")) // 2}]
    return {"update_id": update_id, "message": message}


def callback(update_id: int, data: str, *, chat_id: int, message_id: int) -> dict[str, Any]:
    return {"update_id": update_id, "callback_query": {
        "id": f"cb{update_id}", "chat_instance": "ci", "data": data,
        "from": {"id": chat_id, "is_bot": False, "first_name": "Load", "language_code": "en"},
        "message": {"message_id": message_id, "date": int(time.time()), "text": "…",
                    "chat": {"id": chat_id, "type": "private", "first_name": "Load"},
                    "from": {"id": 7000000001, "is_bot": True, "first_name": "AnchorGPU"}}}}
