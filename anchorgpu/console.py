"""The local console chat: the bot's conversation over stdin/stdout, on the same services."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from anchorgpu.services import Services
from anchorgpu.texts import Lang, t

CommandHandler = Callable[[str], Awaitable[str]]


class ConsoleChat:
    def __init__(self, services: Services, lang: Lang = "ru", out: TextIO | None = None) -> None:
        self.services = services
        self.lang: Lang = lang
        self.out = out or sys.stdout
        self.commands: dict[str, CommandHandler] = {
            "/start": self._static("start"),
            "/help": self._static("help"),
        }

    def _static(self, key: str) -> CommandHandler:
        async def handler(_: str) -> str:
            return t(key, self.lang)

        return handler

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    async def handle(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        command, _, rest = line.partition(" ")
        command = command.split("@", 1)[0].lower()
        if command.startswith("/"):
            handler = self.commands.get(command)
            if handler is None:
                known = ", ".join(sorted(self.commands))
                self.write(f"Unknown command {command}. Known: {known}\n")
                return
            self.write(await handler(rest.strip()) + "\n")
            return
        await self.on_question(line)

    async def on_question(self, text: str) -> None:
        self.write("Question answering is not available yet; try /help.\n")

    async def run(self, stdin: TextIO | None = None) -> None:
        source = stdin or sys.stdin
        interactive = source.isatty()
        if interactive:
            self.write(t("start", self.lang) + "\n")
        while True:
            if interactive:
                self.write("> ")
            line = source.readline()
            if not line:
                break
            if line.strip() in {"/quit", "/exit"}:
                break
            await self.handle(line)
