"""aiogram app factory and runners (polling and webhook).

The services are built once (:class:`app.services.Services`) and injected into handlers as typed Dispatcher
kwargs: a handler declares what it uses (``quotes: QuoteService``, ``answerer: Answerer | None``,
``intents: IntentClassifier``…) and aiogram passes exactly that.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from dataclasses import dataclass
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.enums import ParseMode
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from app.gaps.log import FeedbackStore, build_feedback_store
from app.services import Services
from bot import middlewares
from bot.answer_jobs import AnswerJobs
from bot.answer_recovery import AnswerJobSweeper
from bot.commands import set_command_menus
from bot.delivery.dedupe_store import FailoverUpdateClaims, RedisUpdateClaims, SqlUpdateClaims, UpdateClaims
from bot.delivery.generations import Generations
from bot.delivery.placement_reminders import ReminderPoller, stop_task
from bot.delivery.polling import run_journaled_polling
from bot.fsm_storage import build_fsm_storage
from bot.health import HealthChecks, add_health_routes, start_health_server
from bot.middlewares.observe import TokenRedactingFilter, UpdateContextFilter
from bot.middlewares.ratelimit import RateLimits, build_rate_limits
from bot.output.notices import Notices
from bot.output.rich import RichReplies
from bot.output.streaming import ChatPacer
from bot.preferences import PreferenceStore
from bot.routers import build_root_router
from bot.transport.session import telegram_session
from infra.leases import Lease, run_exclusively
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
    reminders: asyncio.Task[None] | None = None  # placement reminders, started with the dispatcher
    feedback: FeedbackStore | None = None  # votes and the gap log; None: answers go without vote buttons
    glossary_follower: asyncio.Task[None] | None = None  # hot reload of entries.yaml and the index
    answer_jobs: AnswerJobs | None = None  # questions in progress, recovered if this replica dies
    sweeper: asyncio.Task[None] | None = None  # recovers other replicas' stale answer jobs

    @property
    def engine(self) -> AsyncEngine:
        return self.services.engine

    async def aclose(self) -> None:
        await stop_task(self.reminders)
        self.reminders = None
        await stop_task(self.glossary_follower)
        self.glossary_follower = None
        await stop_task(self.sweeper)
        self.sweeper = None
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
    dispatcher = Dispatcher(storage=build_fsm_storage(settings, runtime.engine), settings=settings,
                            pacer=ChatPacer(), generations=Generations(), notices=Notices(),
                            preferences=runtime.preferences, feedback=runtime.feedback,
                            health=runtime.health, answer_jobs=runtime.answer_jobs,
                            rich=RichReplies(settings.telegram.rich_messages),
                            **injected_services(runtime.services))
    middlewares.install(dispatcher, settings, runtime.claims, runtime.preferences, runtime.rate_limits)
    dispatcher.include_router(build_root_router())
    dispatcher.startup.register(_on_startup)

    async def start_reminders(bot: Bot) -> None:
        if runtime.reminders is None:
            poller = ReminderPoller(bot, runtime.services.placements, runtime.preferences,
                                    settings.telegram.placement_reminder_interval_s)
            lease = Lease(runtime.engine, "placement-reminders", ttl_s=settings.lease.ttl_s)
            runtime.reminders = asyncio.create_task(poller.run_forever(lease), name="placement-reminders")
        # ---- answer jobs: one replica at a time (a lease) recovers the questions of dead replicas ----
        if runtime.sweeper is None and runtime.answer_jobs is not None:
            sweeper = AnswerJobSweeper(bot, runtime.answer_jobs, runtime.services.answerer, runtime.feedback,
                                       runtime.services.retriever)
            lease = Lease(runtime.engine, "answer-job-sweeper", ttl_s=settings.lease.ttl_s)
            runtime.sweeper = asyncio.create_task(
                run_exclusively(lease, settings.answer_job.sweep_interval_s, sweeper.run_once), name="answer-sweeper")
        # ---- end answer jobs ----

    async def stop_reminders() -> None:  # before the bot's session closes: no send after shutdown
        await stop_task(runtime.reminders)
        runtime.reminders = None
        await stop_task(runtime.sweeper)
        runtime.sweeper = None

    dispatcher.startup.register(start_reminders)
    dispatcher.shutdown.register(stop_reminders)
    return dispatcher


async def _on_startup(bot: Bot) -> None:
    await set_command_menus(bot)
    me = await bot.me()
    log.info("bot @%s ready", me.username)


def _install_log_filters(settings: Settings) -> None:
    token = settings.telegram.bot_token.get_secret_value() if settings.telegram.bot_token else ""
    secret = settings.telegram.webhook_secret.get_secret_value() if settings.telegram.webhook_secret else ""
    for handler in logging.getLogger().handlers:
        handler.addFilter(UpdateContextFilter())
        handler.addFilter(TokenRedactingFilter([token, secret]))


async def run_bot(settings: Settings) -> None:
    _install_log_filters(settings)
    runtime = await create_runtime(settings)
    # Start-up leaves a large heap (torch, Chroma, catalogs) that never dies; moving it out of the
    # collector's reach keeps each full collection short while updates are served.
    gc.freeze()
    try:
        if settings.telegram.mode == "webhook":
            await run_webhook(settings, runtime)
        else:
            await run_polling(settings, runtime)
    finally:
        await runtime.aclose()


async def run_polling(settings: Settings, runtime: BotRuntime) -> None:
    bot = create_bot(settings)
    dispatcher = create_dispatcher(settings, runtime)
    health = await start_health_server(runtime.health, settings.telegram.webhook_host,
                                       settings.telegram.health_port)
    try:
        await bot.delete_webhook(drop_pending_updates=False)
        log.info("polling %s", settings.telegram.api_base)
        # like dispatcher.start_polling (graceful SIGTERM, closes the session), but each update is journaled
        # before Telegram is told it arrived, and a start finishes what a killed process left (bot/delivery/polling.py)
        await run_journaled_polling(dispatcher, bot, runtime.engine, settings.db.dedupe_ttl_hours * 3600.0,
                                    claims_in_journal_db=isinstance(runtime.claims, SqlUpdateClaims),
                                    handle_signals=True, close_bot_session=True,
                                    allowed_updates=dispatcher.resolve_used_update_types())
    finally:
        if health is not None:
            await health.cleanup()


def build_webhook_app(settings: Settings, runtime: BotRuntime, bot: Bot, dispatcher: Dispatcher) -> web.Application:
    secret = settings.telegram.webhook_secret
    if secret is None or not secret.get_secret_value():
        raise ValueError("webhook mode needs TELEGRAM_WEBHOOK_SECRET")
    app = web.Application()
    # handle_in_background=False: answer only after processing, so a failure is a 5xx and Telegram
    # redelivers the update (de-duplication makes the redelivery safe).
    SimpleRequestHandler(dispatcher, bot, handle_in_background=False,
                         secret_token=secret.get_secret_value()).register(app, path=settings.telegram.webhook_path)
    add_health_routes(app, runtime.health)
    setup_application(app, dispatcher, bot=bot)

    async def register_webhook(_: web.Application) -> None:
        assert settings.telegram.webhook_url is not None
        await bot.set_webhook(settings.telegram.webhook_url, secret_token=secret.get_secret_value(),
                              allowed_updates=dispatcher.resolve_used_update_types(),
                              drop_pending_updates=False)
        log.info("webhook registered, listening on %s:%s%s", settings.telegram.webhook_host,
                 settings.telegram.webhook_port, settings.telegram.webhook_path)

    app.on_startup.append(register_webhook)
    return app


async def run_webhook(settings: Settings, runtime: BotRuntime) -> None:
    bot = create_bot(settings)
    dispatcher = create_dispatcher(settings, runtime)
    app = build_webhook_app(settings, runtime, bot, dispatcher)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, settings.telegram.webhook_host, settings.telegram.webhook_port).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("stopping the webhook server")
        await runner.cleanup()
