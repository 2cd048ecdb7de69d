"""Prometheus metrics of the Telegram front (served at /metrics by :mod:`bot.health`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

UPDATES = Counter("anchorgpu_updates_total", "Telegram updates received, by type", ["type"])
DUPLICATES = Counter("anchorgpu_duplicate_updates_total", "Redelivered updates skipped by de-duplication")
UPDATE_LATENCY = Histogram(
    "anchorgpu_update_seconds", "Time to process one update, by type", ["type"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
ANSWER_TTFT = Histogram("anchorgpu_answer_ttft_seconds", "Time to the first answer token",
                        buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60))
TOKENS_PER_SECOND = Gauge("anchorgpu_answer_tokens_per_second", "Decode speed of the last answer")
TOKENS = Counter("anchorgpu_answer_tokens_total", "Tokens generated for answers")
QUEUE_DEPTH = Gauge("anchorgpu_llm_queue_depth", "Questions waiting for the model")
ERRORS = Counter("anchorgpu_errors_total", "Unhandled errors caught by the error boundary", ["type"])
RETRY_AFTER = Counter("anchorgpu_telegram_429_total", "Flood-control answers (429) from Telegram", ["method"])
RATE_LIMITED = Counter("anchorgpu_rate_limited_total", "Updates refused by our own rate limits", ["scope"])
