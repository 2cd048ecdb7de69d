"""`anchorgpu backup`: a consistent SQLite copy taken while another connection keeps writing, restored."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from anchorgpu.cli import main
from bot.preferences import PreferenceStore, scope_for
from infra.db import create_engine, dispose_engine
from infra.migrate import migrate
from infra.settings import get_settings


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "state" / "anchorgpu.db"
    monkeypatch.setenv("DB_URL", f"sqlite:///{path}")
    get_settings.cache_clear()
    yield path
    get_settings.cache_clear()


class Writer(threading.Thread):
    """Another connection committing pairs of rows (one transaction each) as fast as it can."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.committed = 0  # pairs committed so far
        self.stop = threading.Event()
        self.writing = threading.Event()  # set once it has committed for a while

    def run(self) -> None:
        connection = sqlite3.connect(self.path, timeout=30)
        connection.execute("PRAGMA journal_mode=WAL")
        while not self.stop.is_set():
            pair = self.committed + 1
            with connection:
                connection.executemany("INSERT INTO journal (pair, payload) VALUES (?, ?)",
                                       [(pair, "x" * 200), (pair, "y" * 200)])
            self.committed = pair
            if pair == 50:
                self.writing.set()
        connection.close()


async def test_a_backup_taken_during_writes_is_consistent_and_restores(
        database: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{database}")
    await migrate(engine)
    await PreferenceStore(engine).set(scope_for("user", 7), 7, lang="en", answer_length="short")
    await dispose_engine(engine)
    with sqlite3.connect(database) as setup:
        setup.execute("CREATE TABLE journal (id INTEGER PRIMARY KEY, pair INTEGER NOT NULL, payload TEXT)")
        setup.executemany("INSERT INTO journal (pair, payload) VALUES (?, ?)",
                          [(-n, "z" * 200) for n in range(1, 40_001)])  # ~10 MB: the copy takes a while
    writer = Writer(database)
    writer.start()
    assert await asyncio.to_thread(writer.writing.wait, 30)
    committed_before = writer.committed
    target = tmp_path / "backups" / "copy.db"
    target.parent.mkdir()
    try:
        code = main(["backup", str(target), "--json"])
        committed_during = writer.committed - committed_before
    finally:
        writer.stop.set()
        writer.join()
    assert code == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["backup"] == str(target) and report["integrity"] == "ok"
    assert committed_during > 0, "the writer kept committing while the copy was taken"
    assert sorted(p.name for p in target.parent.iterdir()) == ["copy.db"], "one self-contained file"

    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        pairs = dict(copy.execute("SELECT pair, count(*) FROM journal WHERE pair > 0 GROUP BY pair").fetchall())
        assert copy.execute("SELECT count(*) FROM journal WHERE pair < 0").fetchone() == (40_000,)
    assert set(range(1, committed_before + 1)) <= set(pairs), "every pair committed before the backup is in it"
    assert set(pairs.values()) == {2}, "no transaction is copied by half"
    assert sorted(pairs) == list(range(1, len(pairs) + 1)), "a snapshot: no gaps"
    assert report["tables"]["journal"] == 40_000 + 2 * len(pairs)

    # restore: the bot's own code reads the copy as its database
    restored = create_engine(f"sqlite+aiosqlite:///{target}")
    try:
        resolved = await PreferenceStore(restored).resolve(user_id=7, chat_id=7, is_private=True,
                                                           language_code="ru")
        assert (resolved.lang, resolved.answer_length) == ("en", "short")
    finally:
        await dispose_engine(restored)


def test_a_folder_gets_a_dated_file_and_an_existing_file_needs_force(
        database: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database.parent.mkdir(parents=True)
    with sqlite3.connect(database) as setup:
        setup.execute("CREATE TABLE t (x)")
        setup.execute("INSERT INTO t VALUES (1)")
    folder = tmp_path / "backups"
    folder.mkdir()
    assert main(["backup", str(folder)]) == 0
    written = list(folder.iterdir())
    assert len(written) == 1 and written[0].name.startswith("anchorgpu-") and written[0].suffix == ".db"
    assert "integrity ok" in capsys.readouterr().out
    assert main(["backup", str(written[0])]) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert main(["backup", str(written[0]), "--force"]) == 0


@pytest.mark.parametrize(("setup", "code", "message"), [
    ("postgres", 2, "DB_URL is PostgreSQL: back it up with pg_dump"),
    ("no-folder", 2, "the folder"),
    ("itself", 2, "is the live database itself"),
    ("no-database", 1, "no database at"),
])
def test_what_cannot_be_backed_up_says_why_in_one_line(
        setup: str, code: int, message: str, database: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "copy.db"
    if setup != "no-database":
        database.parent.mkdir(parents=True)
        sqlite3.connect(database).close()
    if setup == "postgres":
        monkeypatch.setenv("DB_URL", "postgresql://postgres@127.0.0.1:5432/test")
        get_settings.cache_clear()
    elif setup == "no-folder":
        target = tmp_path / "missing" / "copy.db"
    elif setup == "itself":
        target = database
    assert main(["backup", str(target)]) == code
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("anchorgpu backup: ")
