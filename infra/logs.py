"""Structured logging set-up: one line per record, JSON on request; secrets never formatted in."""

from __future__ import annotations

import contextlib
import json
import logging
import sys

from infra.settings import DataSettings


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("update_id", "chat_id", "user_id", "error_id", "duration_ms"):
            if hasattr(record, key):
                payload[key] = getattr(record, key)
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False)


CONSOLE_LOG = "console.log"  # in the state dir: what the console chat keeps off its screen


def setup_logging(settings: DataSettings, *, console: bool = False) -> None:
    """One handler on stderr at ``ANCHORGPU_LOG_LEVEL`` (a handler's level, so a library that sets its own
    logger to DEBUG, as bm25s does on import, still prints nothing below it). ``console``: the conversation
    is on this screen, so below WARNING nothing reaches it; those records go to ``var/console.log`` instead
    (or to stderr when stderr is not the screen)."""
    level = logging.getLevelNamesMapping()[settings.log_level]
    formatter: logging.Formatter = (JsonFormatter() if settings.log_json
                                    else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    screen = logging.StreamHandler(sys.stderr)
    screen.setFormatter(formatter)
    screen.setLevel(level)
    handlers: list[logging.Handler] = [screen]
    if console and sys.stderr.isatty():
        screen.setLevel(max(level, logging.WARNING))
        if level < logging.WARNING:
            with contextlib.suppress(OSError):
                settings.state_dir.mkdir(parents=True, exist_ok=True)
                kept = logging.FileHandler(settings.state_dir / CONSOLE_LOG, encoding="utf-8")
                kept.setFormatter(formatter)
                kept.setLevel(level)
                handlers.append(kept)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    # aiohttp access logs and httpx request lines would print URLs that contain the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
