"""The bot's event loop: uvloop unless ``TELEGRAM_EVENT_LOOP=asyncio``.

Every update is a few HTTP round trips to the Bot API and back; under ``anchorgpu bench bot`` the loop's
socket and callback machinery is a large share of the bot's CPU, which libuv does in C.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

T = TypeVar("T")


def run_event_loop(main: Coroutine[Any, Any, T], kind: Literal["uvloop", "asyncio"] = "uvloop") -> T:
    if kind == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
