"""The runners: the bot process in polling or webhook mode (``python -m bot``, ``anchorgpu run``).

What they run is built by :mod:`bot.factory`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal

from aiogram import Bot, Dispatcher
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from bot.delivery.dedupe_store import SqlUpdateClaims
from bot.delivery.polling import run_journaled_polling
from bot.factory import BotRuntime, create_bot, create_dispatcher, create_runtime
from bot.health import add_health_routes, start_health_server
from bot.middlewares.observe import TokenRedactingFilter, UpdateContextFilter
from infra.settings import Settings

log = logging.getLogger(__name__)


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
