"""`anchorgpu chat`: the local console chat over the same services as the bot."""

from __future__ import annotations

import argparse
import asyncio

from anchorgpu.console import ConsoleChat
from anchorgpu.services import Services
from anchorgpu.settings import get_settings
from anchorgpu.texts import Lang


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("chat", help="interactive console chat (no Telegram needed)")
    parser.add_argument("--lang", choices=["ru", "en"], default="ru", help="language of the replies")
    parser.set_defaults(handler=run)


async def chat(lang: Lang) -> None:
    services = await Services.create(get_settings())
    try:
        await ConsoleChat(services, lang=lang).run()
    finally:
        await services.aclose()


def run(args: argparse.Namespace) -> int:
    asyncio.run(chat(args.lang))
    return 0
