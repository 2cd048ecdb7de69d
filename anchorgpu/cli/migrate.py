"""`anchorgpu migrate [--json]`: bring the database at DB_URL to this release's schema.

The bot and the other commands migrate on their own at start-up / first use; this is for deploys that
migrate as a separate step, and to see the revision. Exit codes: 0 at head, 1 the database could not be
reached or migrated (a one-line error). ``--new MESSAGE`` is for developers: it writes a draft revision
from the difference between the models and the newest revision (into ``infra/migrations/versions``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

from anchorgpu.cli._common import print_json
from infra.settings import get_settings

# every module that declares tables on infra.db.Base: the models autogenerate and the drift test compare
MODEL_MODULES = (
    "rag.answering.conversation",
    "gpu.quote.store",
    "gpu.placements.store",
    "gpu.placements.reminders",
    "bot.preferences",
    "bot.delivery.dedupe_store",
    "bot.delivery.update_journal",
    "bot.fsm_storage",
    "app.gaps.log",
    "infra.leases",
    "bot.delivery.answer_jobs",
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("migrate", help="bring the database (DB_URL) to the current schema revision",
                            description="Apply the schema migrations to the database at DB_URL and print its "
                                        "revision. Safe to run from several replicas at once.")
    parser.add_argument("--json", action="store_true", help="print {\"revision\", \"previous\", \"head\"}")
    parser.add_argument("--new", metavar="MESSAGE",
                        help="developers: write a draft revision for the models' changes since the newest one")
    parser.set_defaults(handler=run)


def model_metadata() -> Any:
    """``Base.metadata`` with every table of the app declared on it."""
    from infra.db import Base

    for name in MODEL_MODULES:
        importlib.import_module(name)
    return Base.metadata


async def _migrate(url: str) -> dict[str, str | None]:
    from infra.db import create_engine, dispose_engine
    from infra.migrate import current_revision, head_revision, migrate

    engine = create_engine(url)
    try:
        previous = await current_revision(engine)
        return {"revision": await migrate(engine), "previous": previous, "head": head_revision()}
    finally:
        await dispose_engine(engine)


async def _new_revision(message: str) -> Path | None:
    from infra.db import create_engine, dispose_engine
    from infra.migrate import write_revision

    with tempfile.TemporaryDirectory() as scratch:  # the newest revision applied to an empty database
        engine = create_engine(f"sqlite+aiosqlite:///{Path(scratch) / 'scratch.db'}")
        try:
            return await write_revision(engine, model_metadata(), message)
        finally:
            await dispose_engine(engine)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _fail(args: argparse.Namespace, error: str) -> int:
    if args.json:
        print_json({"error": error})
    else:
        print(f"anchorgpu migrate: {error}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    if args.new:
        path = asyncio.run(_new_revision(args.new))
        print(f"wrote {path}; read it and correct it before committing" if path
              else "the models match the newest revision: nothing to write")
        return 0
    from sqlalchemy.engine import make_url

    from infra.settings import SettingsError

    try:
        url = get_settings().db.url
    except SettingsError as exc:  # DB_URL is not a database URL at all
        return _fail(args, str(exc))
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except Exception:  # not even a URL: shown as given (it cannot carry a password we could hide)
        shown = url
    try:
        result = asyncio.run(_migrate(url))
    except Exception as exc:  # a bad URL, an unreachable or broken database: say so, no traceback
        return _fail(args, f"could not migrate {shown}: {_one_line(exc)}")
    if args.json:
        print_json(result)
    elif result["previous"] == result["revision"]:
        print(f"{shown}: at revision {result['revision']} (head), nothing to do")
    else:
        print(f"{shown}: migrated from {result['previous'] or 'nothing'} to {result['revision']} (head)")
    return 0
