"""`anchorgpu ask "QUESTION"`: one grounded answer, streamed to the terminal or printed as JSON.

``--json`` prints ``{"answer", "grounded", "sources": [{"id", "term", "definition", "source"}], "model",
"ttft_s", "tokens"}`` (the contract other tools parse); without it the answer streams as it is written,
then the sources follow.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TextIO

from anchorgpu.cli._common import print_json
from anchorgpu.services import Services
from anchorgpu.settings import LLMSettings, Settings, get_settings
from rag.answer import Answer, Answerer, Delta, Done, Queued
from rag.prompt import Lang

MAX_QUESTION_CHARS = 2000


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ask", help="answer a question from the glossary with the local model")
    parser.add_argument("question", nargs="+", help="the question, e.g. \"что такое PagedAttention?\"")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of streaming")
    parser.add_argument("--lang", choices=["ru", "en"], default=None,
                        help="answer language (default: the question's language)")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file instead of LLM_MODEL_PATH")
    parser.set_defaults(handler=run)


def render_sources(answer: Answer) -> str:
    if not answer.sources:
        return ""
    title = "Источники" if answer.lang == "ru" else "Sources"
    lines = [f"[{n}] {e.term} — {e.source} ({e.id})" for n, e in enumerate(answer.sources, start=1)]
    return f"\n{title}:\n" + "\n".join(lines)


async def stream_answer(answerer: Answerer, question: str, conversation: str | None, lang: Lang | None,
                        out: TextIO) -> Answer:
    """Print deltas as they arrive; when the final text differs (a fallback), print it after them."""
    streamed: list[str] = []
    final: Answer | None = None
    events = answerer.answer(question, conversation, lang=lang)
    async with contextlib.aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, Queued):
                out.write(f"[queue: #{event.position}, ~{event.eta_s} s]\n")
            elif isinstance(event, Delta):
                streamed.append(event.text)
                out.write(event.text)
            elif isinstance(event, Done):
                final = event.answer
            out.flush()
    assert final is not None
    if "".join(final.text.split()) != "".join("".join(streamed).split()):
        # a fallback, or citations the check corrected: the final text is the one that counts
        out.write(("\n\n" if streamed else "") + final.text)
    out.write("\n" + render_sources(final) + "\n")
    out.flush()
    return final


def _settings(model: Path | None) -> Settings:
    settings = get_settings()
    if model is None:
        return settings
    llm = LLMSettings(**{**settings.llm.model_dump(), "model_path": model, "base_url": None})
    return settings.model_copy(update={"llm": llm})


async def ask(question: str, as_json: bool, lang: Lang | None, model: Path | None) -> int:
    services = await Services.create(_settings(model))
    try:
        answerer = await services.ensure_answerer()
        if answerer.backend is None and not as_json:
            print(f"anchorgpu: model unavailable ({answerer.unavailable_reason}); "
                  "answering from the glossary only", file=sys.stderr)
        if as_json:
            answer = await answerer.ask(question, None, lang=lang)
            print_json(answer.to_json())
        else:
            await stream_answer(answerer, question, None, lang, sys.stdout)
    finally:
        await services.aclose()
    return 0


def run(args: argparse.Namespace) -> int:
    question = " ".join(args.question).strip()
    if not question:
        print('anchorgpu ask: empty question; try: anchorgpu ask "что такое PagedAttention?"', file=sys.stderr)
        return 2
    if len(question) > MAX_QUESTION_CHARS:
        print(f"anchorgpu ask: the question is too long ({len(question)} characters, at most "
              f"{MAX_QUESTION_CHARS})", file=sys.stderr)
        return 2
    return asyncio.run(ask(question, args.json, args.lang, args.model))
