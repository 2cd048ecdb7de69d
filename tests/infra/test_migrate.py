"""Schema migrations on both engines: an empty database, one made by the release before migrations,
replicas migrating at once, and the models never drifting from the revisions."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, MetaData, String, Table, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from anchorgpu.cli.migrate import model_metadata
from bot.preferences import PreferenceStore, scope_for
from infra.db import Base, create_engine, dispose_engine
from infra.migrate import (
    MigrationError,
    baseline_tables,
    current_revision,
    head_revision,
    migrate,
    schema_differences,
)
from rag.answering.conversation import ConversationTurnRow, SQLConversationStore

REPO_ROOT = Path(__file__).resolve().parents[2]
# a replica: imports done, it waits for the go file, so that the two migrate at the same moment
REPLICA = """
import asyncio, os, sys, time
from infra.db import create_engine, dispose_engine
from infra.migrate import migrate

async def main(url, schema, go):
    engine = create_engine(url)
    target = engine.execution_options(schema_translate_map={None: schema}) if schema else engine
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.005)
    try:
        print(await migrate(target), flush=True)
    finally:
        await dispose_engine(engine)

asyncio.run(main(sys.argv[1], sys.argv[2] or None, sys.argv[3]))
"""

# every module declaring tables is imported, whatever this test file itself uses
METADATA: MetaData = model_metadata()


def _schema(engine: AsyncEngine) -> str | None:
    return (engine.get_execution_options().get("schema_translate_map") or {}).get(None)


async def _tables(engine: AsyncEngine) -> set[str]:
    schema = _schema(engine)
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names(schema=schema)))


# a Table, not raw SQL: the scratch schema's translate map applies only to compiled statements
VERSIONS = Table("alembic_version", MetaData(), Column("version_num", String(32)))


async def _version_rows(engine: AsyncEngine) -> list[Any]:
    async with engine.connect() as conn:
        return list((await conn.execute(select(VERSIONS.c.version_num))).scalars())


async def _create_tables_as_the_previous_release(engine: AsyncEngine, tables: list[Any] | None = None) -> None:
    """What the release before migrations ran: ``create_all`` on the models (unchanged since; the drift
    test holds them to revision 0001). checkfirst=False: on PostgreSQL the existence check would look at
    the search path, not at the translated scratch schema."""
    previous = tables if tables is not None else [METADATA.tables[name] for name in sorted(baseline_tables())]
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync: Base.metadata.create_all(sync, tables=previous, checkfirst=False))


async def _twin(engine: AsyncEngine) -> AsyncEngine:
    """A second engine (another replica) on the same database and schema."""
    twin = create_engine(engine.url.render_as_string(hide_password=False))
    schema = _schema(engine)
    return twin.execution_options(schema_translate_map={None: schema}) if schema else twin


async def test_an_empty_database_is_migrated_to_head(sql_engine: AsyncEngine) -> None:
    assert await current_revision(sql_engine) is None
    assert await migrate(sql_engine) == head_revision()
    assert await current_revision(sql_engine) == head_revision()
    assert await _tables(sql_engine) >= {*baseline_tables(), "alembic_version"}
    assert await migrate(sql_engine) == head_revision(), "a second run is a no-op"
    assert await _version_rows(sql_engine) == [head_revision()]
    # the tables work: a preference written and read back through the real store
    store = PreferenceStore(sql_engine, cache_ttl_s=0)
    await store.set(scope_for("user", 7), 7, lang="en")
    assert (await store.get(scope_for("user", 7))).lang == "en"


async def test_a_database_of_the_previous_release_is_stamped_and_keeps_its_rows(sql_engine: AsyncEngine) -> None:
    await _create_tables_as_the_previous_release(sql_engine)
    await PreferenceStore(sql_engine).set(scope_for("chat", -5), -5, lang="ru", answer_length="short")
    conversations = SQLConversationStore(sql_engine, max_tokens=1000)
    await conversations.append("-5:1", "что такое NVLink?", "шина между GPU")
    assert "alembic_version" not in await _tables(sql_engine)

    assert await migrate(sql_engine) == head_revision()
    assert await _version_rows(sql_engine) == [head_revision()]
    prefs = await PreferenceStore(sql_engine).get(scope_for("chat", -5))
    assert (prefs.lang, prefs.answer_length) == ("ru", "short")
    assert [turn.text for turn in await conversations.history("-5:1")] == ["что такое NVLink?", "шина между GPU"]
    assert await schema_differences(sql_engine, METADATA) == []


async def test_a_partial_database_of_the_previous_release_gets_the_missing_tables(sql_engine: AsyncEngine) -> None:
    # the console chat of that release created only its history table
    await _create_tables_as_the_previous_release(sql_engine, [ConversationTurnRow.__table__])
    conversations = SQLConversationStore(sql_engine, max_tokens=1000)
    await conversations.append("42", "H100?", "80 GB")
    assert await _tables(sql_engine) == {"conversation_turns"}

    assert await migrate(sql_engine) == head_revision()
    assert await _tables(sql_engine) >= {*baseline_tables(), "alembic_version"}
    assert [turn.text for turn in await conversations.history("42")] == ["H100?", "80 GB"]
    assert await schema_differences(sql_engine, METADATA) == []


async def test_two_replicas_migrating_at_once_both_succeed(sql_engine: AsyncEngine) -> None:
    twin = await _twin(sql_engine)
    try:
        revisions = await asyncio.gather(migrate(sql_engine), migrate(twin))
    finally:
        await dispose_engine(twin)
    assert revisions == [head_revision(), head_revision()]
    assert await _version_rows(sql_engine) == [head_revision()]


async def test_two_processes_migrating_at_once_both_succeed(sql_engine: AsyncEngine, tmp_path: Path) -> None:
    go = tmp_path / "go"
    url = sql_engine.url.render_as_string(hide_password=False)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    replicas = [await asyncio.create_subprocess_exec(
        sys.executable, "-c", REPLICA, url, _schema(sql_engine) or "", str(go), cwd=REPO_ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) for _ in range(2)]
    for replica in replicas:
        assert replica.stdout is not None
        assert await asyncio.wait_for(replica.stdout.readline(), 120) == b"ready\n"
    go.touch()
    results = [await asyncio.wait_for(replica.communicate(), 120) for replica in replicas]
    for replica, (out, err) in zip(replicas, results, strict=True):
        assert replica.returncode == 0, err.decode()
        assert out.decode().split() == [head_revision()]
    assert await _version_rows(sql_engine) == [head_revision()]
    assert await schema_differences(sql_engine, METADATA) == []


async def test_the_models_match_the_migrations(sql_engine: AsyncEngine) -> None:
    """A model changed without a revision fails here: write one (``anchorgpu migrate --new MESSAGE``)."""
    await migrate(sql_engine)
    assert set(METADATA.tables) <= await _tables(sql_engine)
    assert await schema_differences(sql_engine, METADATA) == []


async def test_a_database_of_a_newer_release_is_refused(sql_engine: AsyncEngine) -> None:
    await migrate(sql_engine)
    async with sql_engine.begin() as conn:
        await conn.execute(update(VERSIONS).values(version_num="9999"))
    with pytest.raises(MigrationError, match=r"'9999'.*newer release"):
        await migrate(sql_engine)


async def test_an_in_memory_database_migrates_too() -> None:
    engine = create_engine("sqlite+aiosqlite:///:memory:")
    try:
        assert await migrate(engine) == head_revision()
        assert await current_revision(engine) == head_revision()
        await PreferenceStore(engine).set(scope_for("user", 1), 1, lang="ru")
        assert (await PreferenceStore(engine).get(scope_for("user", 1))).lang == "ru"
    finally:
        await dispose_engine(engine)
