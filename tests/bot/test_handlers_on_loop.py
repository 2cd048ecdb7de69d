"""Every handler and filter of the bot is a coroutine: aiogram sends anything else through a thread."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.types import Message

from bot.filters import Sync
from bot.routers import build_root_router


def _routers(root: Router) -> list[Router]:
    found = [root]
    for child in root.sub_routers:
        found += _routers(child)
    return found


def test_no_handler_or_filter_runs_in_a_thread() -> None:
    off_loop: list[str] = []
    for router in _routers(build_root_router()):
        for name, observer in router.observers.items():
            for handler in observer.handlers:
                if not handler.awaitable:
                    off_loop.append(f"{router.name}.{name}: handler {handler.callback!r}")
                for check in handler.filters or []:
                    if not check.awaitable:
                        off_loop.append(f"{router.name}.{name}: filter {check.callback!r}")
    assert off_loop == []


async def test_sync_wraps_magic_filters_and_predicates() -> None:
    message = Message.model_validate({"message_id": 1, "date": 0, "text": "/quote h100",
                                      "chat": {"id": 1, "type": "private"}})
    assert await Sync(F.text.startswith("/quote"))(message)
    assert not await Sync(F.document)(message)
    assert await Sync(lambda m: m.chat.id == 1)(message)
