"""Every handler and filter of the bot is a coroutine: aiogram sends anything else through a thread."""

from __future__ import annotations

import importlib
import pkgutil

from aiogram import F, Router
from aiogram.types import Message

import bot.routers
from bot.filters import Sync


def _routers() -> list[Router]:
    # each command module's own router (build_root_router would attach them, and a router attaches once)
    names = [info.name for info in pkgutil.iter_modules(bot.routers.__path__)]
    modules = [importlib.import_module(f"bot.routers.{name}") for name in names]
    return [module.router for module in modules if isinstance(getattr(module, "router", None), Router)]


def test_no_handler_or_filter_runs_in_a_thread() -> None:
    routers = _routers()
    assert len(routers) >= 10
    off_loop: list[str] = []
    for router in routers:
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
