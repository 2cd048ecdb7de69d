"""The local console chat: the bot's conversation over stdin/stdout, on the same services and views."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import TextIO

from anchorgpu.replies import StatusLine, reply_to_question
from app.services import Services
from app.views.fit import fit_reply
from app.views.gpus import render_gpus
from app.views.placements import render_placement_error, render_placements, render_result
from app.views.quote import render_conflict, render_input_error, render_issued, render_recent
from gpu.placements.engine import PlacementStateError
from gpu.placements.service import PlacementConflictError, PlacementResult
from gpu.placements.store import PlacementNotFoundError
from gpu.quote.request import QuoteInputError
from gpu.quote.store import IdempotencyConflictError
from infra.i18n import Lang, t

log = logging.getLogger(__name__)

CommandHandler = Callable[[str], Awaitable[str]]
CONSOLE_CONVERSATION = "console"
CONSOLE_OWNER = "console:local"
PLACEMENT_ERRORS = (QuoteInputError, PlacementNotFoundError, PlacementConflictError, PlacementStateError,
                    IdempotencyConflictError)


class ConsoleChat:
    def __init__(self, services: Services, lang: Lang = "ru", out: TextIO | None = None) -> None:
        self.services = services
        self.lang: Lang = lang
        self.out = out or sys.stdout
        self.commands: dict[str, CommandHandler] = {
            "start": self._static("start"),
            "help": self._static("help"),
            "ask": self._ask,
            "quote": self._quote,
            "quotes": self._quotes,
            "fit": self._fit,
            "gpus": self._gpus,
            "rent": self._rent,
            "placements": self._placements,
            "stop_placement": self._stop_placement,
            "start_placement": self._start_placement,
            "extend": self._extend,
        }

    async def _fit(self, args: str) -> str:
        return fit_reply(self.services.fit, args, self.lang)

    async def _gpus(self, _: str) -> str:
        return render_gpus(self.services.data, self.lang)

    async def _quote(self, args: str) -> str:
        if not args.strip():
            return t("quote_usage", self.lang)
        try:
            issued = await self.services.quotes.quote_text(args, owner=CONSOLE_OWNER)
        except QuoteInputError as exc:
            return render_input_error(exc, self.lang) + "\n\n" + t("quote_usage", self.lang)
        except IdempotencyConflictError as exc:
            return render_conflict(exc, self.lang)
        return render_issued(issued, self.lang)

    async def _quotes(self, _: str) -> str:
        return render_recent(await self.services.quotes.recent(CONSOLE_OWNER), self.lang)

    # ---- simulated placements (same service and views as the CLI and the bot) -------------------------
    async def _placement_call(self, call: Callable[[], Awaitable[PlacementResult]]) -> str:
        try:
            return render_result(await call(), self.lang)
        except PLACEMENT_ERRORS as exc:
            return render_placement_error(exc, self.lang)

    async def _rent(self, args: str) -> str:
        text = args.strip()
        if not text:
            return t("placement_usage", self.lang)
        placements = self.services.placements
        if text.upper().startswith("Q-") and " " not in text:
            return await self._placement_call(lambda: placements.rent_quote(text, owner=CONSOLE_OWNER))
        return await self._placement_call(lambda: placements.rent_text(text, owner=CONSOLE_OWNER))

    async def _placements(self, _: str) -> str:
        placements = self.services.placements
        return render_placements(await placements.owned(CONSOLE_OWNER), placements.clock(), self.lang)

    async def _stop_placement(self, args: str) -> str:
        if not args.strip():
            return t("placement_usage_id", self.lang, command="stop_placement")
        return await self._placement_call(lambda: self.services.placements.stop(args.strip(), owner=CONSOLE_OWNER))

    async def _start_placement(self, args: str) -> str:
        if not args.strip():
            return t("placement_usage_id", self.lang, command="start_placement")
        return await self._placement_call(
            lambda: self.services.placements.start(args.strip(), owner=CONSOLE_OWNER))

    async def _extend(self, args: str) -> str:
        placement_id, _, duration = args.strip().partition(" ")
        if not placement_id or not duration.strip():
            return t("placement_usage_extend", self.lang)
        return await self._placement_call(
            lambda: self.services.placements.extend(placement_id, duration, owner=CONSOLE_OWNER))

    def _static(self, key: str) -> CommandHandler:
        async def handler(_: str) -> str:
            return t(key, self.lang)

        return handler

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    async def handle(self, line: str) -> None:
        """One line: a command or a question. A bug while answering it is logged with an id and apologised
        for in one line (as the bot's error boundary does); the chat goes on."""
        try:
            await self._handle(line)
        except Exception as exc:
            error_id = uuid.uuid4().hex[:8]
            log.error("unhandled error %s answering a console line", error_id, exc_info=exc)
            self.write("\n" + t("error_apology", self.lang, error_id=error_id) + "\n")

    async def _handle(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        intent = self.services.intents.classify(line)
        if intent.kind == "command":
            assert intent.command is not None
            handler = self.commands.get(intent.command)
            if handler is None:
                known = ", ".join(f"/{name}" for name in sorted(self.commands))
                self.write(t("console_unknown_command", self.lang, command=f"/{intent.command}", known=known) + "\n")
                return
            self.write(await handler(intent.text) + "\n")
            return
        await self.on_question(line)

    async def on_question(self, text: str) -> None:
        """Stream the answer as it is generated, then its sources (one conversation per console). On a
        terminal, a one-line indicator shows until the reply's first words replace it."""
        out: TextIO | StatusLine = self.out
        if self.out.isatty():
            out = StatusLine(self.out, self.lang)
            out.show(t("console_thinking", self.lang))
        try:
            await reply_to_question(self.services, text, lang=None, conversation=CONSOLE_CONVERSATION, out=out)
        finally:
            if isinstance(out, StatusLine) and out.shown:
                out.clear()

    async def _ask(self, args: str) -> str:
        if not args:
            return t("console_ask_usage", self.lang)
        await self.on_question(args)
        return ""

    async def run(self, stdin: TextIO | None = None) -> None:
        source = stdin or sys.stdin
        interactive = source.isatty()
        if interactive:
            self.write(t("start", self.lang) + "\n")
            self._catch_interrupts()
        while True:
            if interactive:
                self.write("> ")
            # read in a thread so start-up work (model load, prompt warm-up) goes on while we wait for input
            line = await asyncio.to_thread(source.readline)
            if not line:
                break
            if line.strip() in {"/quit", "/exit"}:
                break
            self._replying = asyncio.create_task(self.handle(line))
            try:
                await self._replying
            except asyncio.CancelledError:
                if not self._replying.cancelled():
                    raise  # the chat itself is being cancelled
                self.write("\n" + t("console_stopped", self.lang) + "\n")
            finally:
                self._replying = None

    _replying: asyncio.Task[None] | None = None

    def _catch_interrupts(self) -> None:
        """Ctrl+C stops the answer being prepared, not the chat (/quit or Ctrl+D leave it)."""
        # no signal handlers on Windows or off the main thread: Ctrl+C then ends the chat, as before
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._interrupt)

    def _interrupt(self) -> None:
        if self._replying is not None and not self._replying.done():
            self._replying.cancel()
        else:
            self.write("\n" + t("console_interrupt_hint", self.lang) + "\n> ")
