"""Schema migrations: Alembic, configured here in code (no alembic.ini), run on the app's async engine.

Every front brings the database to the newest revision before it touches a table: the bot at start-up,
the CLI and the console chat on first use of a store, ``anchorgpu migrate`` on demand. Revisions live in
``infra/migrations/versions``; revision ``0001`` is the schema of the last release without migrations.

* Replicas starting together do not race: the upgrade holds a lock — on PostgreSQL a transaction-scoped
  advisory lock (the whole upgrade is one transaction there), on a SQLite file a file lock beside the
  database; inside one process an asyncio lock. Whoever waited finds the database at head and stops.
* A database made by that last release (its tables from ``create_all``, no ``alembic_version``) keeps its
  rows: with all the baseline tables it is stamped ``0001``; with some of them (a front created only
  the tables it used) revision ``0001`` adds the missing ones.
* An engine made with ``execution_options(schema_translate_map={None: schema})`` (the tests' scratch
  schemas) is migrated in that schema: the version table, the tables and the reflection all land there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from filelock import FileLock, Timeout
from sqlalchemy import Connection, MetaData, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from infra.db import sqlite_file

log = logging.getLogger(__name__)
# Alembic reports at INFO on every run (even a no-op one); our own lines say what changed. An operator who
# configured the "alembic" logger keeps their level.
if logging.getLogger("alembic").level == logging.NOTSET:
    logging.getLogger("alembic").setLevel(logging.WARNING)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BASELINE_REVISION = "0001"
VERSION_TABLE = "alembic_version"
LOCK_WAIT_S = 300.0  # a replica waits this long for another one's upgrade before giving up
LOCK_POLL_S = 0.05


class MigrationError(Exception):
    """The database cannot be brought to this release's schema (the message says why)."""


def alembic_config(connection: Connection | None = None, target_metadata: MetaData | None = None) -> Config:
    """Alembic's configuration, without an ini file; ``env.py`` takes the connection from it."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = connection
    config.attributes["target_metadata"] = target_metadata
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    head = _scripts().get_current_head()
    assert head is not None, f"no revisions in {MIGRATIONS_DIR}"
    return head


def baseline_tables() -> tuple[str, ...]:
    """The tables revision 0001 creates (read from the revision itself, so there is one list)."""
    baseline = _scripts().get_revision(BASELINE_REVISION)
    assert baseline is not None
    return tuple(baseline.module.TABLES)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The database's revision; None for a database never migrated (empty, or from the last release)."""
    async with engine.connect() as conn:
        return await conn.run_sync(_read_revision)


async def migrate(engine: AsyncEngine) -> str:
    """Bring the database to the newest revision (a no-op when it is there) and return that revision."""
    head = head_revision()
    # A SQLite file is locked before the first look, so that replicas never open a new file at the same
    # moment (one of them switches it to WAL). PostgreSQL looks first and locks only to upgrade.
    async with _sqlite_lock(engine):
        current = await current_revision(engine)
        if current == head:
            return head
        if current is not None and current not in _known_revisions():
            raise MigrationError(f"the database is at revision {current!r}, which this release does not know "
                                 "(was it migrated by a newer release?)")
        async with _in_process_lock(), engine.begin() as conn:
            try:
                revision = await conn.run_sync(_upgrade)
            except CommandError as exc:
                raise MigrationError(f"migration failed: {exc}") from exc
    if revision != current:
        log.info("database migrated from %s to %s", current or "nothing", revision)
    return revision


async def schema_differences(engine: AsyncEngine, metadata: MetaData) -> list[Any]:
    """What Alembic's autogenerate finds between the database and ``metadata`` (empty: in step)."""
    async with engine.connect() as conn:
        return await conn.run_sync(_compare, metadata)


async def write_revision(engine: AsyncEngine, metadata: MetaData, message: str) -> Path | None:
    """A new revision file from the difference between the migrated database and ``metadata``; None
    (and no file) when there is none.

    For developers (``anchorgpu migrate --new MESSAGE``): the file is a draft to read and correct
    (autogenerate misses renames and server defaults); revisions may also be written by hand.
    """
    await migrate(engine)
    if not await schema_differences(engine, metadata):
        return None
    rev_id = f"{int(head_revision()) + 1:04d}"
    async with engine.begin() as conn:
        script = await conn.run_sync(lambda sync: command.revision(
            alembic_config(sync, metadata), message, autogenerate=True, rev_id=rev_id))
    _scripts.cache_clear()
    assert script is not None and not isinstance(script, list)
    return Path(script.path)


# ---- in the connection's thread -----------------------------------------------------------------------
def _known_revisions() -> set[str]:
    return {script.revision for script in _scripts().walk_revisions()}


def _scratch_schema(conn: Connection) -> str | None:
    translate: dict[str | None, str | None] = conn.get_execution_options().get("schema_translate_map") or {}
    return translate.get(None)


def _use_schema(conn: Connection) -> None:
    """Point reflection and the version table at the engine's translated schema (PostgreSQL).

    The translate map rewrites the statements SQLAlchemy compiles, but reflection (``has_table``, which
    Alembic uses to find its version table) looks at the search path; ``SET LOCAL`` ends with the
    transaction, so the pooled connection is not changed for others.
    """
    schema = _scratch_schema(conn)
    if schema and conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL search_path TO {conn.dialect.identifier_preparer.quote_identifier(schema)}")


def _read_revision(conn: Connection) -> str | None:
    _use_schema(conn)
    return MigrationContext.configure(conn).get_current_revision()


def _advisory_key(schema: str | None) -> int:
    digest = hashlib.blake2b(f"anchorgpu.migrate:{schema or ''}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _upgrade(conn: Connection) -> str:
    _use_schema(conn)
    if conn.dialect.name == "postgresql":
        # held until this transaction (the whole upgrade: PostgreSQL has transactional DDL) ends
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _advisory_key(_scratch_schema(conn))})
    config = alembic_config(conn)
    inspector = inspect(conn)
    if not inspector.has_table(VERSION_TABLE):
        present = [name for name in baseline_tables() if inspector.has_table(name)]
        if len(present) == len(baseline_tables()):
            log.info("database made before migrations: stamping revision %s", BASELINE_REVISION)
            command.stamp(config, BASELINE_REVISION)
        elif present:
            log.info("database made before migrations with %s only: revision %s adds the other tables",
                     ", ".join(present), BASELINE_REVISION)
    command.upgrade(config, "head")
    revision = MigrationContext.configure(conn).get_current_revision()
    assert revision is not None
    return revision


def _compare(conn: Connection, metadata: MetaData) -> list[Any]:
    _use_schema(conn)
    return list(compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata))


_LOOP_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _in_process_lock() -> asyncio.Lock:
    """One upgrade at a time in this process (per event loop).

    Alembic's ``op`` and ``context`` are module-level proxies to the migration being run, so two upgrades
    interleaved on one thread (two engines, or one in-memory engine used twice) would send each other's
    operations to the wrong connection. Across processes the database and file locks serialize them.
    """
    loop = asyncio.get_running_loop()
    lock = _LOOP_LOCKS.get(loop)
    if lock is None:
        lock = _LOOP_LOCKS[loop] = asyncio.Lock()
    return lock


@contextlib.asynccontextmanager
async def _sqlite_lock(engine: AsyncEngine) -> AsyncIterator[None]:
    """On a SQLite file, one migrating process at a time (a file lock beside the database).

    Polled rather than blocking, so that a wait never blocks the event loop (two engines in one process
    may migrate at once). In-memory databases belong to one connection and need no lock.
    """
    path = sqlite_file(engine.url.render_as_string(hide_password=False)) if engine.dialect.name == "sqlite" else None
    if path is None:
        yield
        return
    lock = FileLock(f"{path}.migrate.lock", thread_local=False)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            lock.acquire(blocking=False)
            break
        except Timeout:
            if time.monotonic() > deadline:
                raise MigrationError(f"another process has been migrating {path} for over {LOCK_WAIT_S:.0f} s "
                                     f"(lock file {lock.lock_file})") from None
            await asyncio.sleep(LOCK_POLL_S)
    try:
        yield
    finally:
        lock.release()
