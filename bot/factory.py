"""The aiogram app factory: the bot, the runtime (what the process holds besides aiogram) and the dispatcher.

The runners (polling, webhook) are :mod:`bot.runners`; the background tasks :mod:`bot.delivery.background`.

The services are built once (:class:`app.services.Services`) and injected into handlers as typed Dispatcher
kwargs: a handler declares what it uses (``quotes: QuoteService``, ``answerer: Answerer | None``,
``intents: IntentClassifier``…) and aiogram passes exactly that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.enums import ParseMode
from sqlalchemy.ext.asyncio import AsyncEngine

from app.gaps.log import FeedbackStore, build_feedback_store
from app.services import Services
from bot import middlewares
from bot.commands import set_command_menus
from bot.delivery.answer_jobs import AnswerJobs
from bot.delivery.background import BackgroundTasks
from bot.delivery.dedupe_store import FailoverUpdateClaims, RedisUpdateClaims, SqlUpdateClaims, UpdateClaims
from bot.delivery.generations import Generations
from bot.delivery.placement_reminders import stop_task
from bot.deps import Answering, Output
from bot.fsm_storage import build_fsm_storage
from bot.health import HealthChecks
from bot.middlewares.ratelimit import RateLimits, build_rate_limits
from bot.output.notices import Notices
from bot.output.rich import RichReplies
from bot.output.streaming import ChatPacer
from bot.preferences import PreferenceStore
from bot.routers import build_root_router
from bot.transport.session import telegram_session
from infra.migrate import migrate
from infra.settings import PUBLIC_BOT_API, Settings

log = logging.getLogger(__name__)


def create_bot(settings: Settings) -> Bot:
    token = settings.telegram.bot_token
    if token is None:
        raise ValueError("TELEGRAM_BOT_TOKEN is not set")
    api_base = None if settings.telegram.api_base == PUBLIC_BOT_API else settings.telegram.api_base
    session = telegram_session(api_base)
    return Bot(token.get_secret_value(), session=session,
               default=DefaultBotProperties(parse_mode=ParseMode.HTML))


@dataclass
class BotRuntime:
    """Everything the bot process holds besides aiogram objects, closed together at shutdown."""

    services: Services
    claims: UpdateClaims
    preferences: PreferenceStore
    health: HealthChecks
    warm_up: asyncio.Task[None] | None = None
    rate_limits: RateLimits | None = None  # None: in-process buckets built by middlewares.install
    feedback: FeedbackStore | None = None  # votes and the gap log; None: answers go without vote buttons
    glossary_follower: asyncio.Task[None] | None = None  # hot reload of entries.yaml and the index
    answer_jobs: AnswerJobs | None = None  # questions in progress, recovered if this replica dies
    background: BackgroundTasks | None = None  # reminders and the answer-job sweeper, started with the dispatcher

    @property
    def engine(self) -> AsyncEngine:
        return self.services.engine

    async def aclose(self) -> None:
        if self.background is not None:
            await self.background.stop()
        await stop_task(self.glossary_follower)
        self.glossary_follower = None
        if self.warm_up is not None:
            self.warm_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.warm_up
        await self.claims.aclose()
        if self.rate_limits is not None:
            await self.rate_limits.aclose()
        await self.services.aclose()


async def create_runtime(settings: Settings, services: Services | None = None) -> BotRuntime:
    services = services or Services.create(settings)
    warm_up: asyncio.Task[None] | None = None
    follower: asyncio.Task[None] | None = None
    try:
        answerer = await services.ensure_answerer()
        # cache the static prompt prefix while updates are already being served (it waits in the LLM queue)
        warm_up = asyncio.create_task(answerer.warm_up())
        follower = asyncio.create_task(services.follow_glossary(), name="glossary-reload")
    except Exception:  # the bot still serves /fit, /quote, /terms; questions say they are unavailable
        log.exception("question answering could not start")
    await migrate(services.engine)  # every table (dedupe, preferences, FSM, quotes, history) at this release's schema
    ttl_s = settings.db.dedupe_ttl_hours * 3600.0
    sql_claims = SqlUpdateClaims(services.engine, ttl_s)
    # Redis shares the claims between replicas; the table takes over during its outages
    claims: UpdateClaims = (FailoverUpdateClaims(RedisUpdateClaims(settings.db.redis_url, ttl_s), sql_claims)
                            if settings.db.redis_url else sql_claims)
    return BotRuntime(services=services, claims=claims, preferences=PreferenceStore(services.engine),
                      health=HealthChecks(services), warm_up=warm_up, rate_limits=build_rate_limits(settings),
                      feedback=await _feedback_store(settings, services), glossary_follower=follower,
                      answer_jobs=AnswerJobs(services.engine, settings.answer_job))


async def _feedback_store(settings: Settings, services: Services) -> FeedbackStore | None:
    """The feedback store, its rows past FEEDBACK_RETENTION_DAYS purged; None (logged) when it cannot start."""
    try:
        store = build_feedback_store(settings, services.engine)
        purged = await store.purge()
    except Exception:
        log.exception("feedback and the gap log are off")
        return None
    if purged:
        log.info("purged %d feedback and gap-log rows older than %d days", purged, store.retention_days)
    return store


def injected_services(services: Services) -> dict[str, Any]:
    """The Dispatcher kwargs handlers may declare, by name: the typed seam between Telegram and the app."""
    return {
        "services": services,
        "quotes": services.quotes,
        "placements": services.placements,
        "fit": services.fit,
        "gpu_data": services.data,
        "intents": services.intents,
        "pipeline": services.pipeline,
        "answerer": services.answerer,
        "retriever": services.retriever,
    }


def create_dispatcher(settings: Settings, runtime: BotRuntime) -> Dispatcher:
    services = runtime.services
    output = Output(pacer=ChatPacer(), generations=Generations(), notices=Notices(),
                    rich=RichReplies(settings.telegram.rich_messages))
    answering = Answering(pipeline=services.pipeline, gpu_data=services.data, answerer=services.answerer,
                          retriever=services.retriever, feedback=runtime.feedback, answer_jobs=runtime.answer_jobs)
    # the groups (answering, output) and, for handlers that use one or two, their parts by name
    dispatcher = Dispatcher(storage=build_fsm_storage(settings, runtime.engine), settings=settings,
                            answering=answering, output=output,
                            pacer=output.pacer, generations=output.generations, notices=output.notices,
                            preferences=runtime.preferences, feedback=runtime.feedback,
                            health=runtime.health, answer_jobs=runtime.answer_jobs, rich=output.rich,
                            **injected_services(services))
    middlewares.install(dispatcher, settings, runtime.claims, runtime.preferences, runtime.rate_limits)
    dispatcher.include_router(build_root_router())
    dispatcher.startup.register(_on_startup)

    if runtime.background is None:
        runtime.background = BackgroundTasks(settings, runtime.services, runtime.preferences, runtime.answer_jobs,
                                             runtime.feedback)
    dispatcher.startup.register(runtime.background.start)
    dispatcher.shutdown.register(runtime.background.stop)  # before the bot's session closes: no send after it
    return dispatcher


async def _on_startup(bot: Bot) -> None:
    await set_command_menus(bot)
    me = await bot.me()
    log.info("bot @%s ready", me.username)
