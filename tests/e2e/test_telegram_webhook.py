"""Webhook mode, the bot a real process: the secret header is enforced, an update is processed before it is
acknowledged (a failure is a 5xx that Telegram redelivers, and the redelivery is processed once), and
/healthz and /metrics are served."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dev.telegram_stub import BOT_USERNAME, Fault, TelegramStub
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import free_port, running_bot

SECRET = "e2e-webhook-Secret_1"


@pytest.fixture(scope="module")
async def hook() -> AsyncIterator[tuple[TelegramStub, BotProcess, str]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/webhook"
    env = {"TELEGRAM_MODE": "webhook", "TELEGRAM_WEBHOOK_URL": url, "TELEGRAM_WEBHOOK_SECRET": SECRET,
           "TELEGRAM_WEBHOOK_HOST": "127.0.0.1", "TELEGRAM_WEBHOOK_PORT": str(port), "LLM_MAX_TOKENS": "24"}
    async with running_bot(ready=False, **env) as (stub, bot):
        calls = await stub.wait_for("setWebhook", timeout=240)
        assert calls[0].params["secret_token"] == SECRET and calls[0].params["url"] == url
        yield stub, bot, f"http://127.0.0.1:{port}"


def gpus_update(update_id: int, chat_id: int) -> dict[str, Any]:
    text = f"/gpus@{BOT_USERNAME}"
    return {"update_id": update_id, "message": {
        "message_id": 10, "date": 0, "text": text, "chat": {"id": chat_id, "type": "supergroup", "title": "t"},
        "from": {"id": 7, "is_bot": False, "first_name": "T", "language_code": "en"},
        "entities": [{"type": "bot_command", "offset": 0, "length": len(text)}]}}


async def _post(base: str, update: dict[str, Any], secret: str | None) -> httpx.Response:
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    async with httpx.AsyncClient(timeout=120) as client:
        return await client.post(f"{base}/telegram/webhook", json=update, headers=headers)


async def test_a_wrong_or_missing_secret_is_rejected(hook: tuple[TelegramStub, BotProcess, str]) -> None:
    stub, _, base = hook
    assert (await _post(base, gpus_update(101, -501), "wrong-secret")).status_code in (401, 403)
    assert (await _post(base, gpus_update(102, -501), None)).status_code in (401, 403)
    assert not stub.calls_to("sendMessage", -501)


async def test_processed_before_acknowledged_and_redelivery_is_safe(
        hook: tuple[TelegramStub, BotProcess, str]) -> None:
    stub, bot, base = hook
    response = await _post(base, gpus_update(201, -502), SECRET)
    assert response.status_code == 200
    # processing finished before the 200: the reply is already there
    assert len(stub.calls_to("sendMessage", -502)) == 1
    again = await _post(base, gpus_update(201, -502), SECRET)
    assert again.status_code == 200 and len(stub.calls_to("sendMessage", -502)) == 1

    # Telegram is down for both the reply and the apology (each tried 4 times by bot.transport.retry): the webhook
    # fails, so Telegram will retry...
    stub.inject("sendMessage", Fault(500), times=8)
    failed = await _post(base, gpus_update(202, -503), SECRET)
    assert failed.status_code >= 500, bot.log()[-2000:]
    # ...and the retry is processed (the failed attempt released its claim), exactly once
    retried = await _post(base, gpus_update(202, -503), SECRET)
    assert retried.status_code == 200
    delivered = [c for c in stub.calls_to("sendMessage", -503) if "H100" in str(c.params.get("text"))]
    # 4 refused replies + 4 refused apologies, then 1 delivered reply
    assert len(stub.calls_to("sendMessage", -503)) == 9 and len(delivered) == 5
    assert "TEST-token" not in bot.log()


async def test_health_and_metrics(hook: tuple[TelegramStub, BotProcess, str]) -> None:
    _, _, base = hook
    async with httpx.AsyncClient(timeout=30) as client:
        health = await client.get(f"{base}/healthz")
        metrics = await client.get(f"{base}/metrics")
    assert health.status_code == 200, health.text
    assert health.json() == {"status": "ok", "down": [], "model_loaded": True, "index_ready": True,
                             "database": True, "redis": None}
    assert metrics.status_code == 200
    assert 'anchorgpu_updates_total{type="message"}' in metrics.text
    assert "anchorgpu_update_seconds_bucket" in metrics.text
    assert "anchorgpu_duplicate_updates_total 1.0" in metrics.text
    assert "anchorgpu_llm_queue_depth" in metrics.text
