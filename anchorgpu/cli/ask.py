"""`anchorgpu ask "QUESTION"`: one answer, streamed to the terminal or printed as JSON.

``--json`` prints ``{"answer", "grounded", "sources": [{"id", "term", "definition", "source"}], "model",
"ttft_s", "tokens", "caveats": [{"source", "text"}], "intent", "slots"}`` (the contract other tools parse;
``caveats``: the cited seeds' own disclaimers, verbatim; ``intent``: the route the message took, ``slots``:
what was found in it — model, GPUs, count, hours, pricing — and ``semantic``: the router's best route,
score and margin); without it the answer streams as it is written, then the sources. Every message goes
through the one reply pipeline (``app.pipeline``), as in the bot: a fit question to the fit engine, a
quote to the price list, a request with a slot missing to a question back.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from anchorgpu.cli._common import print_json
from anchorgpu.replies import reply_to_question
from app.services import Services
from infra.i18n import Lang
from infra.settings import LLMSettings, Settings, get_settings

MAX_QUESTION_CHARS = 2000


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ask", help="answer a question from the glossary with the local model")
    parser.add_argument("question", nargs="+", help="the question, e.g. \"что такое PagedAttention?\"")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of streaming")
    parser.add_argument("--lang", choices=["ru", "en"], default=None,
                        help="answer language (default: the question's language)")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file instead of LLM_MODEL_PATH")
    parser.set_defaults(handler=run)


def _settings(model: Path | None) -> Settings:
    settings = get_settings()
    if model is None:
        return settings
    llm = LLMSettings(**{**settings.llm.model_dump(), "model_path": model, "base_url": None})
    return settings.model_copy(update={"llm": llm})


async def ask(question: str, as_json: bool, lang: Lang | None, model: Path | None) -> int:
    services = Services.create(_settings(model))
    try:
        document = await reply_to_question(services, question, lang=lang, conversation=None,
                                           out=None if as_json else sys.stdout)
        if as_json:
            print_json(document)
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
