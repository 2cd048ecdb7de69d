"""`anchorgpu fit "REQUEST" [--json] [--config config.json | --gguf FILE]`: will a model fit in VRAM.

Exit 0 whether it fits or not; bad input exits 2 with {"error": ..., "suggestions": [...]} under --json.
Text, notes and errors are in ``--lang`` (en by default), from the same catalog the bot uses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from anchorgpu.cli._common import print_json
from infra.i18n import Phrase, t
from infra.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fit", help="will a model fit in GPU memory (VRAM), and on what")
    parser.add_argument("request", nargs="*", help='e.g. "llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4"')
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, metavar="CONFIG_JSON", help="a Hugging Face config.json")
    source.add_argument("--gguf", type=Path, metavar="FILE", help="a GGUF file (only its header is read)")
    parser.add_argument("--lang", choices=("en", "ru"), default="en", help="language of the text output")
    parser.set_defaults(handler=run)


def _fail(args: argparse.Namespace, phrase: Phrase, suggestions: list[str]) -> int:
    message = phrase.render(args.lang)
    if args.json:
        print_json({"error": message, "suggestions": suggestions})
    else:
        hint = "\n" + t("fit_did_you_mean", args.lang, options=", ".join(suggestions)) if suggestions else ""
        print(f"anchorgpu fit: {message}{hint}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.views.fit import render, result_json
    from gpu.data import GpuData
    from gpu.fit.architectures import ModelInputError, ModelSpec, model_from_gguf, model_from_hf_config
    from gpu.fit.request import FitInputError
    from gpu.fit.service import FitService

    text = " ".join(args.request).strip()
    service = FitService(GpuData(get_settings().data.data_dir))
    model: ModelSpec | None = None
    try:
        if args.config is not None:
            try:
                raw = args.config.read_bytes()
            except OSError as exc:
                return _fail(args, Phrase.of("fit_err_file_unreadable", name=str(args.config),
                                             detail=str(exc.strerror)), [])
            model = model_from_hf_config(raw, args.config.name)
        elif args.gguf is not None:
            model = model_from_gguf(args.gguf)
        result = service.fit(text, model=model)
    except FitInputError as exc:
        return _fail(args, exc.phrase, exc.suggestions)
    except ModelInputError as exc:
        return _fail(args, exc.phrase, [])
    if args.json:
        print_json(result_json(result, args.lang))
    else:
        print(render(result, args.lang, currency=service.currency))
    return 0
