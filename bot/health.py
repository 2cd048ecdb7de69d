"""``/healthz`` (model loaded, index ready, database and Redis reachable) and Prometheus ``/metrics``.

Served on the webhook's aiohttp app in webhook mode, or on a small server of its own on
TELEGRAM_HEALTH_PORT in polling mode (0 turns it off).

``/healthz`` is ``{"status": "ok" | "degraded" | "down", "down": [names], "model_loaded", "index_ready",
"database", "redis"}``; ``down`` names what is missing (``database``, ``redis``, ``index``, ``model``).
It answers 503 only when this replica cannot do its job (no database, no index). Redis down is 200
"degraded": the replica still serves (claims in the database, no guided flow, no history), and Redis is
shared, so a 503 would take every replica out of the load balancer at once.
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
from infra.redis_conn import fail_fast_redis

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
        client = fail_fast_redis(url)  # a fresh one each time: a probe never reuses a connection of the old server
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
        database, redis = await asyncio.gather(self.database(), self.redis())
        model, index = self.model(), self.index()
        down = [name for name, up in (("database", database), ("redis", redis), ("index", index), ("model", model))
                if up is False]
        # Without the model the bot still answers from retrieval, without Redis from the database and
        # without follow-up context: degraded, not down (see the module docstring).
        ready = database and index
        status = "down" if not ready else ("degraded" if down else "ok")
        return (200 if ready else 503), {"status": status, "down": down, "model_loaded": model,
                                         "index_ready": index, "database": database, "redis": redis}

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
