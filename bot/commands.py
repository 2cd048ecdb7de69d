"""Command menus (setMyCommands) in Russian and English, for private chats and for groups."""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.types import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

from infra.i18n import Lang, t

log = logging.getLogger(__name__)

PRIVATE_COMMANDS = ("start", "help", "ask", "new", "fit", "quote", "quotes", "placements", "gpus", "terms", "stop",
                    "settings")
GROUP_COMMANDS = ("ask", "new", "fit", "quote", "quotes", "placements", "gpus", "terms", "stop", "settings", "help")


def menu(commands: tuple[str, ...], lang: Lang) -> list[BotCommand]:
    return [BotCommand(command=name, description=t(f"cmd_{name}", lang)) for name in commands]


async def set_command_menus(bot: Bot) -> None:
    """English is the default list; Russian-speaking clients get the Russian one."""
    for scope, commands in ((BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
                            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS)):
        for lang, code in (("en", None), ("ru", "ru")):
            try:
                await bot.set_my_commands(menu(commands, lang), scope=scope, language_code=code)  # type: ignore[arg-type]
            except Exception as exc:  # a menu is cosmetic: never block start-up on it
                log.warning("setMyCommands failed for %s/%s: %s", scope.type, lang, exc)
