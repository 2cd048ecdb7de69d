from __future__ import annotations

from pathlib import Path

import pytest

from infra.settings import SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for key in list(os.environ):
        if key.startswith(("TELEGRAM_", "LLM_", "RAG_", "DB_", "ANCHORGPU_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults_follow_the_state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANCHORGPU_STATE_DIR", str(tmp_path / "state"))
    settings = load_settings()
    assert settings.telegram.bot_token is None
    assert settings.telegram.api_base == "https://api.telegram.org"
    assert settings.llm.model_path == tmp_path / "state" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert settings.rag.chroma_path == tmp_path / "state" / "chroma"
    assert settings.db.url == f"sqlite+aiosqlite:///{tmp_path / 'state' / 'anchorgpu.db'}"


def test_token_is_secret_and_api_base_is_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:ABCDEFGHIJKLMNOP")
    monkeypatch.setenv("TELEGRAM_API_BASE", "http://127.0.0.1:8081/")
    settings = load_settings()
    assert settings.telegram.bot_token is not None
    assert "ABCDEFGH" not in repr(settings) and "ABCDEFGH" not in str(settings.telegram)
    assert settings.telegram.api_base == "http://127.0.0.1:8081"


def test_plain_database_urls_get_async_drivers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_URL", "postgresql://postgres@127.0.0.1:5432/test")
    assert load_settings().db.url == "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def test_empty_values_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_THREADS", "")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "")
    settings = load_settings()
    assert settings.llm.threads is None and settings.telegram.bot_token is None


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("TELEGRAM_BOT_TOKEN", "not-a-token", "TELEGRAM_BOT_TOKEN"),
        ("TELEGRAM_API_BASE", "ftp://example", "TELEGRAM_API_BASE"),
        ("LLM_N_CTX", "lots", "LLM_N_CTX"),
        ("LLM_N_GPU_LAYERS", "-5", "LLM_N_GPU_LAYERS"),
        ("DB_URL", "mysql://root@localhost/test", "DB_URL"),
        ("TELEGRAM_MODE", "webhook", "webhook mode needs"),
    ],
)
def test_invalid_settings_fail_with_one_clear_line(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                                   expected: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    message = str(info.value)
    assert expected in message and "\n" not in message


def test_dotenv_file_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("LLM_MAX_TOKENS=99\nRAG_TOP_K=7\n")
    settings = load_settings()
    assert settings.llm.max_tokens == 99 and settings.rag.top_k == 7
