"""The local console chat: the bot's conversation over stdin/stdout, on the same services."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TextIO

from anchorgpu.services import Services
from anchorgpu.texts import Lang, t

CommandHandler = Callable[[str], Awaitable[str]]
CONSOLE_CONVERSATION = "console"


class ConsoleChat:
    def __init__(self, services: Services, lang: Lang = "ru", out: TextIO | None = None) -> None:
        self.services = services
        self.lang: Lang = lang
        self.out = out or sys.stdout
        self.commands: dict[str, CommandHandler] = {
            "/start": self._static("start"),
            "/help": self._static("help"),
            "/ask": self._ask,
            "/quote": self._quote,
            "/quotes": self._quotes,
            "/fit": self._fit,
        }

    async def _fit(self, args: str) -> str:
        from gpu.fit.service import fit_reply

        return fit_reply(getattr(self.services, "fit", None), args, self.lang)

    async def _quote(self, args: str) -> str:
        from gpu.quote.chat import quote_reply

        return await quote_reply(self.services.quotes, args, self.lang)

    async def _quotes(self, _: str) -> str:
        from gpu.quote.chat import quotes_reply

        return await quotes_reply(self.services.quotes, self.lang)

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
        """Stream the grounded answer as it is generated, then the sources (one conversation per console)."""
        from anchorgpu.cli.ask import stream_answer

        answerer = await self.services.ensure_answerer()
        await stream_answer(answerer, text, CONSOLE_CONVERSATION, None, self.out)

    async def _ask(self, args: str) -> str:
        if not args:
            return "Usage: /ask QUESTION" if self.lang == "en" else "Использование: /ask ВОПРОС"
        await self.on_question(args)
        return ""

    async def run(self, stdin: TextIO | None = None) -> None:
        source = stdin or sys.stdin
        interactive = source.isatty()
        if interactive:
            self.write(t("start", self.lang) + "\n")
        while True:
            if interactive:
                self.write("> ")
            # read in a thread so start-up work (model load, prompt warm-up) goes on while we wait for input
            line = await asyncio.to_thread(source.readline)
            if not line:
                break
            if line.strip() in {"/quit", "/exit"}:
                break
            await self.handle(line)
