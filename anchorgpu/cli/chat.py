"""`anchorgpu chat`: the local console chat over the same services as the bot."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

from anchorgpu.console import ConsoleChat
from app.services import Services
from infra.i18n import Lang
from infra.logs import setup_logging
from infra.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("chat", help="interactive console chat (no Telegram needed)")
    parser.add_argument("--lang", choices=["ru", "en"], default="ru", help="language of the replies")
    parser.set_defaults(handler=run)


async def prepare_answers(services: Services) -> None:
    """Load the retriever and the model, then cache the static prompt prefix, while commands already work;
    then follow glossary edits for as long as the chat runs."""
    answerer = await services.ensure_answerer()
    if answerer.backend is None and answerer.generate:  # the default (quote) mode never asks the model
        print(f"anchorgpu: model unavailable ({answerer.unavailable_reason}); answering from the glossary only",
              file=sys.stderr)
    else:
        await answerer.warm_up()
    await services.follow_glossary()


async def chat(lang: Lang) -> None:
    services = Services.create(get_settings())
    preparing = asyncio.create_task(prepare_answers(services))
    try:
        await ConsoleChat(services, lang=lang).run()
    finally:
        preparing.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await preparing
        await services.aclose()


def run(args: argparse.Namespace) -> int:
    setup_logging(get_settings().data, console=True)
    asyncio.run(chat(args.lang))
    return 0
