"""`anchorgpu backup PATH [--force] [--json]`: a consistent copy of the SQLite database, taken while the bot runs.

SQLite's online-backup API copies the live file from one read transaction: in WAL mode (the app's
setting) that snapshot does not block the bot's writers, and it holds exactly the transactions committed
before the copy started — never half of one. All pages are copied in one step on purpose: a stepwise
backup restarts whenever another connection writes, which on a busy bot may never finish. The copy is
written beside its destination under a temporary name, checked with ``PRAGMA integrity_check``, switched
to a self-contained rollback journal (no -wal/-shm files to carry along) and only then renamed into
place, so a file at PATH is always a complete backup. Restore: stop the bot, put the copy at the DB_URL
path (or point DB_URL at it), start the bot.

PostgreSQL (DB_URL=postgresql://…) is backed up with its own tools, ``pg_dump``/``pg_restore`` (see
docs/operations.md, Backups); this command refuses it instead of pretending.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from anchorgpu.cli._common import print_json
from infra.settings import get_settings

BUSY_TIMEOUT_S = 30.0


class BackupError(Exception):
    """Phrased for the user; `code` is the exit status (2: wrong usage, 1: the backup failed)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("backup", help="copy the SQLite database consistently, even while the bot runs",
                            description="Copy the SQLite database (DB_URL) to PATH with SQLite's online-backup "
                                        "API. PostgreSQL: use pg_dump (docs/operations.md, Backups).")
    parser.add_argument("path", help="the backup file to write, or an existing folder (a dated file inside)")
    parser.add_argument("--force", action="store_true", help="replace PATH if it already exists")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run)


def sqlite_database(url: str) -> Path:
    """The database file behind DB_URL; PostgreSQL and in-memory databases are refused."""
    from sqlalchemy.engine import make_url

    if url.startswith("postgresql"):
        raise BackupError("DB_URL is PostgreSQL: back it up with pg_dump, e.g. `pg_dump -Fc -d "
                          "postgresql://USER@HOST/DB -f anchorgpu.dump` (docs/operations.md: Backups)", 2)
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        raise BackupError(f"DB_URL {url!r} is not a SQLite file: nothing to back up", 2)
    return Path(database)


def _target(source: Path, path: Path, force: bool) -> Path:
    if path.is_dir():
        path = path / f"{source.stem}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}{source.suffix or '.db'}"
    if not path.parent.is_dir():
        raise BackupError(f"cannot write {path}: the folder {path.parent} does not exist", 2)
    if path.exists() and path.resolve() == source.resolve():
        raise BackupError(f"{path} is the live database itself; choose another path", 2)
    if path.exists() and not force:
        raise BackupError(f"{path} already exists; pass --force to replace it", 2)
    if path.exists() and not path.is_file():
        raise BackupError(f"{path} exists and is not a file", 2)
    return path


def backup_sqlite(source: Path, path: Path, force: bool = False) -> dict[str, Any]:
    """Copies `source` to `path` (see the module docstring); returns what was written."""
    if not source.is_file():
        raise BackupError(f"no database at {source} (DB_URL): the bot creates it on its first start")
    target = _target(source, path, force)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    started = time.perf_counter()
    try:
        with contextlib.closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True,
                                                timeout=BUSY_TIMEOUT_S)) as live, \
                contextlib.closing(sqlite3.connect(partial)) as copy:
            live.backup(copy)  # every page in one step: one consistent snapshot (see above)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            check = [row[0] for row in copy.execute("PRAGMA integrity_check")]
            if check != ["ok"]:
                raise BackupError(f"the copy failed its integrity check: {'; '.join(map(str, check[:3]))}")
            tables = [row[0] for row in copy.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            rows = {name: copy.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables}
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot back up {source}: {exc}") from None
    except OSError as exc:
        raise BackupError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    return {"source": str(source), "backup": str(target), "bytes": target.stat().st_size, "tables": rows,
            "integrity": "ok", "seconds": round(time.perf_counter() - started, 3)}


def run(args: argparse.Namespace) -> int:
    try:
        source = sqlite_database(get_settings().db.url)
        result = backup_sqlite(source, Path(args.path).expanduser(), force=args.force)
    except BackupError as exc:
        print(f"anchorgpu backup: {exc}", file=sys.stderr)
        return exc.code
    if args.json:
        print_json(result)
    else:
        print(f"backed up {result['source']} -> {result['backup']}: {len(result['tables'])} tables, "
              f"{sum(result['tables'].values())} rows, {result['bytes'] / 1024:.0f} KiB, integrity ok, "
              f"{result['seconds']:.2f}s")
    return 0
