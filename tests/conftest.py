"""Shared fixtures: the Telegram stub, a bot process against it, and isolated state directories."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from dev.telegram_stub import TelegramStub
from gpu.data import GpuData
from gpu.fit.engine import FitResult
from gpu.fit.service import FitService
from infra.db import create_engine
from infra.settings import DataSettings

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = DataSettings.model_fields["data_dir"].default  # the shipped data/, as the settings define it
TEST_TOKEN = "123456789:TEST-token-for-the-local-stub-only"
SMALL_MODEL = REPO_ROOT / "var" / "models" / "smollm2-135m-instruct-q4_1.gguf"
DEFAULT_MODEL = REPO_ROOT / "var" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def gpu_data() -> GpuData:
    return GpuData(DATA_DIR)


def fit_service() -> FitService:
    return FitService(gpu_data())


def notes_en(result: FitResult) -> list[str]:
    """A fit result's notes as an English reader sees them."""
    return [note.render("en") for note in result.notes]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def sql_engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """The app database on both engines: a SQLite file, or a scratch schema in the local PostgreSQL."""
    if request.param == "sqlite":
        sqlite = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'app.db'}")
        yield sqlite
        await sqlite.dispose()
        return
    base = create_engine(PG_URL)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        async with base.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except OSError as exc:  # pragma: no cover - only without the local server
        await base.dispose()
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    try:
        yield base.execution_options(schema_translate_map={None: schema})
    finally:
        async with base.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await base.dispose()


@pytest.fixture
async def stub() -> AsyncIterator[TelegramStub]:
    server = TelegramStub()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture(scope="session")
def glossary_index() -> Path:
    """The real glossary's Chroma index, built once per test session."""
    from tests.rag.support import shared_chroma_dir, shared_retriever

    shared_retriever()
    return shared_chroma_dir()


@pytest.fixture
def state_dir(tmp_path: Path, glossary_index: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    # Reuse the provisioned models instead of copying half a gigabyte per test.
    (path / "models").symlink_to(REPO_ROOT / "var" / "models", target_is_directory=True)
    # A bot process finds its index up to date (ingest is a no-op by content hash) instead of re-embedding.
    shutil.copytree(glossary_index, path / "chroma")
    return path


def bot_env(stub: TelegramStub, state_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "LLM_", "RAG_", "DB_"))}
    env.update({
        "TELEGRAM_BOT_TOKEN": TEST_TOKEN,
        "TELEGRAM_API_BASE": stub.base_url,
        "ANCHORGPU_STATE_DIR": str(state_dir),
        "DB_URL": f"sqlite+aiosqlite:///{state_dir / 'anchorgpu.db'}",
        "RAG_CHROMA_PATH": str(state_dir / "chroma"),
        "LLM_MODEL_PATH": str(SMALL_MODEL),
        "LLM_ANSWER_MODE": "generate",  # the bot tests stream, verify and recover what a model writes
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


class BotProcess:
    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "anchorgpu", "run"], env=self.env,
                                     stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        for _ in range(int(timeout * 10)):
            if self.proc.poll() is not None:
                return self.proc.returncode
            await asyncio.sleep(0.1)
        self.proc.kill()
        return self.proc.wait()


@pytest.fixture
async def bot_factory(stub: TelegramStub, state_dir: Path, tmp_path: Path) -> AsyncIterator[
        Callable[..., BotProcess]]:
    started: list[BotProcess] = []

    def factory(**extra_env: str) -> BotProcess:
        bot = BotProcess(bot_env(stub, state_dir, **extra_env), tmp_path / f"bot{len(started)}.log")
        bot.start()
        started.append(bot)
        return bot

    yield factory
    for bot in started:
        await bot.stop()
