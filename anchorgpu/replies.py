"""The text fronts' rendering of the one reply pipeline (console chat, ``anchorgpu ask``).

What a message is, and the reply, are decided by :class:`app.pipeline.ReplyPipeline`, the same object the
Telegram bot asks; this module only prints: the reply's text, or a glossary answer as it streams.
"""

from __future__ import annotations

import contextlib
from typing import Any, TextIO

from app.reply import GlossaryReply, RefusalReply, SmallTalkReply
from app.services import Services
from app.views.answer import answer_json, answer_text, render_caveats
from app.views.answer import render_sources as render_answer_sources  # this module's render_sources wraps it
from app.views.reply import reply_json
from infra.i18n import Lang, t
from rag.answering.answerer import Answerer
from rag.answering.events import Answer, Delta, Done, Queued
from rag.answering.prompt import Turn


class StatusLine:
    """A one-line indicator on a terminal ("… thinking", the queue position), erased by the first thing
    written after it: the answer's first verified sentence, or any other reply."""

    ERASE = "\r\x1b[K"

    def __init__(self, out: TextIO, lang: Lang) -> None:
        self.out = out
        self.lang: Lang = lang
        self.shown = False

    def show(self, text: str) -> None:
        self.out.write(self.ERASE + text)
        self.out.flush()
        self.shown = True

    def queued(self, position: int, eta_s: int) -> None:
        self.show(t("console_queued", self.lang, position=position, eta=eta_s))

    def write(self, text: str) -> int:
        if self.shown and text:
            self.out.write(self.ERASE)
            self.shown = False
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def clear(self) -> None:
        self.write(" ")  # erases the indicator
        self.out.write("\r")
        self.out.flush()


def render_sources(answer: Answer) -> str:
    """The sources as every front shows them (:func:`app.views.answer.render_sources`, plain text)."""
    sources = render_answer_sources(answer.sources, answer.lang)
    return f"\n{sources}" if sources else ""


async def stream_answer(answerer: Answerer, question: str, conversation: str | None, lang: Lang | None,
                        out: TextIO | StatusLine | None, history: list[Turn] | None = None,
                        topical: bool = False) -> Answer:
    """Print deltas as they arrive; when the final text differs (a fallback), print it after them."""
    streamed: list[str] = []
    final: Answer | None = None
    events = answerer.answer(question, conversation, lang=lang, history=history, topical=topical)
    async with contextlib.aclosing(events) as stream:
        async for event in stream:
            if out is None:
                if isinstance(event, Done):
                    final = event.answer
                continue
            if isinstance(event, Queued):
                if isinstance(out, StatusLine):
                    out.queued(event.position, event.eta_s)
                else:
                    out.write(f"[queue: #{event.position}, ~{event.eta_s} s]\n")
            elif isinstance(event, Delta):
                streamed.append(event.text)
                out.write(event.text)
            elif isinstance(event, Done):
                final = event.answer
            out.flush()
    assert final is not None
    if out is not None:
        text = answer_text(final)
        if "".join(text.split()) != "".join("".join(streamed).split()):
            # a fallback, or citations the check corrected: the final text is the one that counts
            out.write(("\n\n" if streamed else "") + text)
        out.write("\n" + render_sources(final) + "\n")
        if final.caveats:
            out.write("\n" + render_caveats(final.caveats, final.lang) + "\n")
        out.flush()
    return final


async def reply_to_question(services: Services, question: str, *, lang: Lang | None,
                            conversation: str | None, out: TextIO | StatusLine | None) -> dict[str, Any]:
    """Answer one message; print the reply to ``out`` (streamed) when given; return the JSON document."""
    await services.ensure_router()
    answerer = services.answerer
    if conversation is not None and answerer is None:
        answerer = await services.ensure_answerer()  # the conversation lives in the answerer's store
    history = await answerer.history(conversation) if answerer is not None and conversation else []
    reply = await services.pipeline.reply(question, history=history, lang=lang)
    if isinstance(reply, GlossaryReply):
        answerer = await services.ensure_answerer()
        answer = await stream_answer(answerer, reply.question, conversation, lang, out, history, reply.topical)
        return {**answer_json(answer), **reply.routing.to_json()}
    document = reply_json(reply, services.data)
    if answerer is not None and not isinstance(reply, RefusalReply | SmallTalkReply):
        # a follow-up ("а у неё?", «на неделю») takes its subject from this turn
        await answerer.remember_reply(conversation, question, document["answer"])
    if out is not None:
        out.write(document["answer"] + "\n")
        out.flush()
    return document
