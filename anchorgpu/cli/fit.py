"""`anchorgpu fit "REQUEST" [--json] [--config config.json | --gguf FILE]`: will a model fit in VRAM.

Exit 0 whether it fits or not; bad input exits 2 with {"error": ..., "suggestions": [...]} under --json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from anchorgpu.cli._common import print_json


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fit", help="will a model fit in GPU memory (VRAM), and on what")
    parser.add_argument("request", nargs="*", help='e.g. "llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4"')
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, metavar="CONFIG_JSON", help="a Hugging Face config.json")
    source.add_argument("--gguf", type=Path, metavar="FILE", help="a GGUF file (only its header is read)")
    parser.add_argument("--lang", choices=("en", "ru"), default="en", help="language of the text output")
    parser.set_defaults(handler=run)


def _fail(args: argparse.Namespace, message: str, suggestions: list[str]) -> int:
    if args.json:
        print_json({"error": message, "suggestions": suggestions})
    else:
        show = suggestions and "Did you mean" not in message
        hint = f" Did you mean: {', '.join(suggestions)}?" if show else ""
        print(f"anchorgpu fit: {message}{hint}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from anchorgpu.settings import get_settings
    from gpu.fit.models import ModelInputError, ModelSpec, model_from_gguf, model_from_hf_config
    from gpu.fit.request import FitInputError
    from gpu.fit.service import FitService, render, result_json

    text = " ".join(args.request).strip()
    service = FitService.from_data_dir(get_settings().data.data_dir)
    model: ModelSpec | None = None
    try:
        if args.config is not None:
            try:
                raw = args.config.read_bytes()
            except OSError as exc:
                return _fail(args, f"Cannot read {args.config}: {exc.strerror}.", [])
            model = model_from_hf_config(raw, args.config.name)
        elif args.gguf is not None:
            model = model_from_gguf(args.gguf)
        result = service.fit(text, model=model)
    except (FitInputError, ModelInputError) as exc:
        return _fail(args, str(exc), list(getattr(exc, "suggestions", [])))
    if args.json:
        print_json(result_json(result))
    else:
        print(render(result, args.lang, currency=service.currency))
    return 0
