"""One flow turn at a time per chat and user: the guided /quote flow's and the placement buttons' lock.

A button pressed right after the bot sent it can arrive before the handler that sent it has saved the
step (updates are handled concurrently). Flow updates of one chat+user therefore take turns; the lock is
per process and only orders the flows' own steps (idempotency never relies on it: see gpu.quote.store).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiogram import BaseMiddleware
from aiogram.fsm.context import FSMContext
from aiogram.types import CallbackQuery, TelegramObject

_flow_locks: weakref.WeakValueDictionary[tuple[int, int], asyncio.Lock] = weakref.WeakValueDictionary()


@asynccontextmanager
async def flow_turn(chat_id: int, user_id: int) -> AsyncIterator[None]:
    key = (chat_id, user_id)
    lock = _flow_locks.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _flow_locks[key] = lock
    async with lock:
        yield


class FlowTurnMiddleware(BaseMiddleware):
    """Every button that reaches the router it is set on waits for the previous flow update of its chat and
    user, then reads the step again: aiogram read it (``raw_state``, what the state filters compare) when
    the update arrived, possibly while that previous update was still changing it."""

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        assert isinstance(event, CallbackQuery)
        chat_id = event.message.chat.id if event.message is not None else event.from_user.id
        async with flow_turn(chat_id, event.from_user.id):
            state = data.get("state")
            if isinstance(state, FSMContext):
                data["raw_state"] = await state.get_state()
            return await handler(event, data)
