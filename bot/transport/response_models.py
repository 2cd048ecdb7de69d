"""Keep aiogram's parametrised response models alive for the life of the process.

aiogram validates every Bot API reply with ``Response[method.__returning__]``. pydantic caches parametrised
generic models in a ``WeakValueDictionary`` only, so once the garbage collector has swept the class (a
class always sits in a reference cycle), the next call builds the model class and its validator again:
about 2 ms of CPU per Bot API call, measured with py-spy under ``anchorgpu bench bot``, where it was the
largest single cost of a reply. Holding one strong reference per method type makes it a dictionary hit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.methods import Response

if TYPE_CHECKING:
    from aiogram import Bot
    from aiogram.methods import TelegramMethod


class PinResponseModels(BaseRequestMiddleware):
    def __init__(self) -> None:
        self.pinned: dict[type, Any] = {}

    async def __call__(self, make_request: NextRequestMiddlewareType[Any], bot: Bot,
                       method: TelegramMethod[Any]) -> Response[Any]:
        kind = type(method)
        if kind not in self.pinned:
            self.pinned[kind] = Response[method.__returning__]  # type: ignore[name-defined]
        return await make_request(bot, method)
