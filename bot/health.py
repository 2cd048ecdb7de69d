"""``/healthz`` (model loaded, index ready, database reachable) and Prometheus ``/metrics``.

Served on the webhook's aiohttp app in webhook mode, or on a small server of its own on
TELEGRAM_HEALTH_PORT in polling mode (0 turns it off).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from app.services import Services
from bot import metrics

log = logging.getLogger(__name__)


class HealthChecks:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def database(self) -> bool:
        try:
            async with asyncio.timeout(3):
                async with self.services.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
            return True
        except Exception as exc:
            log.warning("health: database unreachable: %s", exc)
            return False

    async def redis(self) -> bool | None:
        """None when no Redis is configured (DB_REDIS_URL unset)."""
        url = self.services.settings.db.redis_url
        if not url:
            return None
        import redis.asyncio as redis_asyncio

        client: Any = redis_asyncio.from_url(url)
        try:
            async with asyncio.timeout(3):
                return bool(await client.ping())
        except Exception as exc:
            log.warning("health: Redis unreachable: %s", exc)
            return False
        finally:
            await client.aclose()

    def model(self) -> bool:
        answerer = self.services.answerer
        return answerer is not None and answerer.backend is not None

    def index(self) -> bool:
        return self.services.retriever is not None

    async def report(self) -> tuple[int, dict[str, Any]]:
        checks = {"model_loaded": self.model(), "index_ready": self.index(), "database": await self.database()}
        # Without the model the bot still answers from retrieval: degraded, not down.
        healthy = checks["database"] and checks["index_ready"]
        status = "ok" if healthy and checks["model_loaded"] else ("degraded" if healthy else "down")
        return (200 if healthy else 503), {"status": status, **checks}

    def refresh_gauges(self) -> None:
        if self.services.answerer is not None:
            metrics.QUEUE_DEPTH.set(self.services.answerer.queue.waiting)


def add_health_routes(app: web.Application, checks: HealthChecks) -> None:
    async def healthz(_: web.Request) -> web.Response:
        status, payload = await checks.report()
        return web.json_response(payload, status=status)

    async def metrics_view(_: web.Request) -> web.Response:
        checks.refresh_gauges()
        return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)


async def start_health_server(checks: HealthChecks, host: str, port: int) -> web.AppRunner | None:
    """The polling-mode health server; a busy port is logged, not fatal (the bot matters more)."""
    if port == 0:
        return None
    app = web.Application()
    add_health_routes(app, checks)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        log.warning("health server not started on %s:%s: %s", host, port, exc)
        await runner.cleanup()
        return None
    log.info("health and metrics on http://%s:%s/healthz", host, port)
    return runner
