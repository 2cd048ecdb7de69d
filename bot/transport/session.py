"""The Bot API session: JSON request bodies, orjson on both directions.

aiogram sends every request as a form: ``application/x-www-form-urlencoded`` percent-encodes the text in
pure Python (every Cyrillic letter becomes six bytes, ``%D0%B0``), and nested objects such as
``reply_markup`` are JSON inside that. The Bot API documents ``application/json`` for every request that
uploads no file; measured under ``anchorgpu bench bot``, urlencoding our answers (HTML breakdowns, ten
inline cards) cost more CPU than any handler. Requests that upload a file (the first send of a /fit chart)
still go as multipart, exactly as aiogram builds them.

:func:`telegram_session` is the session the bot runs with: JSON bodies, pinned response models and the one
retry policy (:mod:`bot.transport.retry`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import orjson
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import InputFile
from aiohttp import ClientError, ClientTimeout

from bot.transport.response_models import PinResponseModels
from bot.transport.retry import RetryPolicy, TransientErrorRetry

_JSON_HEADERS = {"Content-Type": "application/json"}


class JsonReady:
    """A method that gives its request fields as JSON-ready values (None: it uploads a file); a mixin."""

    def json_fields(self, prepare: Callable[[Any], Any]) -> dict[str, Any] | None:
        """``prepare`` turns one aiogram value (a markup, reply parameters) into JSON the way aiogram does."""
        raise NotImplementedError


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class JsonBodySession(AiohttpSession):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(json_loads=orjson.loads, json_dumps=_dumps, **kwargs)

    def json_body(self, bot: Bot, method: TelegramMethod[Any]) -> bytes | None:
        """The request as one JSON object, or None when it uploads a file (multipart needed)."""
        files: dict[str, InputFile] = {}
        if isinstance(method, JsonReady):  # checked by class (runtime protocols are slow to check)
            # already the JSON Telegram receives (a rich table's blocks): no dump and walk of every cell
            ready = method.json_fields(lambda value: self.prepare_value(value, bot=bot, files=files,
                                                                        _dumps_json=False))
            if ready is not None and not files:
                return orjson.dumps(ready)
            files.clear()
        fields: dict[str, Any] = {}
        for key, value in method.model_dump(warnings=False).items():
            # native values (not JSON strings inside the form): 0 and False are real values here
            prepared = self.prepare_value(value, bot=bot, files=files, _dumps_json=False)
            if prepared is not None:
                fields[key] = prepared
        return None if files else orjson.dumps(fields)

    async def make_request(self, bot: Bot, method: TelegramMethod[TelegramType],
                           timeout: int | None = None) -> TelegramType:
        body = self.json_body(bot, method)
        if body is None:
            return await super().make_request(bot, method, timeout)
        session = await self.create_session()
        url = self.api.api_url(token=bot.token, method=method.__api_method__)
        try:
            limit = ClientTimeout(total=self.timeout if timeout is None else timeout)
            async with session.post(url, data=body, headers=_JSON_HEADERS, timeout=limit) as resp:
                raw_result = await resp.text()
        except TimeoutError as exc:
            raise TelegramNetworkError(method=method, message="Request timeout error") from exc
        except ClientError as exc:
            raise TelegramNetworkError(method=method, message=f"{type(exc).__name__}: {exc}") from exc
        response = self.check_response(bot=bot, method=method, status_code=resp.status, content=raw_result)
        return cast(TelegramType, response.result)


def telegram_session(api_base: str | None = None, retry: RetryPolicy | None = None) -> JsonBodySession:
    """The bot's session: ``api_base`` a Bot API server other than Telegram's (a local one, the test stub),
    ``retry`` the policy for transient failures (the default: :class:`RetryPolicy`)."""
    session = JsonBodySession() if api_base is None else JsonBodySession(api=TelegramAPIServer.from_base(api_base))
    session.middleware(PinResponseModels())
    session.middleware(TransientErrorRetry(retry))  # 5xx, dropped connections, 429: a reply is not lost to a hiccup
    return session
