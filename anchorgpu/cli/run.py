"""`anchorgpu run`: the Telegram bot when a token is set, otherwise the local console chat."""

from __future__ import annotations

import argparse
import asyncio
import sys

from infra.logs import setup_logging
from infra.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run the Telegram bot (or the console chat without a token)")
    parser.add_argument("--lang", choices=["ru", "en"], default="ru", help="console chat language")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    console = settings.telegram.bot_token is None
    # the console is the conversation itself: library chatter below WARNING would interleave with answers
    setup_logging(settings.data, console=console)
    if console:
        print("TELEGRAM_BOT_TOKEN is not set: starting the local console chat (type /help, /quit to leave).",
              file=sys.stderr)
        # imported on the path that uses it: the console never loads aiogram, the bot never the console
        from anchorgpu.cli.chat import chat

        asyncio.run(chat(args.lang))
        return 0
    from bot.event_loop import run_event_loop
    from bot.runners import run_bot

    print(f"Starting the Telegram bot ({settings.telegram.mode}) against {settings.telegram.api_base}.",
          file=sys.stderr)
    run_event_loop(run_bot(settings), settings.telegram.event_loop)
    return 0
