"""Glossary hot reload (rag.retrieval.reload): a running retriever follows entries.yaml without a restart."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
import yaml

from rag.glossary import glossary_file
from rag.retrieval.reload import GlossaryReloader
from rag.retrieval.retriever import build_retriever
from tests.rag.support import rag_settings, shared_chroma_dir, shared_retriever

NEW_ENTRY = {
    "id": "999-teplokub", "term": "ТеплоКуб", "aliases": ["TeploCube"], "category": "hardware",
    "concept": "teplokub", "source": "999_reload_test.txt",
    "definition": "ТеплоКуб — шкаф жидкостного охлаждения на восемь серверов, отводящий до 120 кВт тепла.",
}


@pytest.fixture
def live(tmp_path: Path) -> tuple[GlossaryReloader, Path]:
    shared_retriever()  # the session's index, copied: no re-embedding of the whole glossary
    chroma = tmp_path / "chroma"
    shutil.copytree(shared_chroma_dir(), chroma)
    data = tmp_path / "data"
    shutil.copytree(Path(__file__).resolve().parents[3] / "data", data)
    settings = rag_settings(chroma)
    glossary = glossary_file(data)
    retriever = build_retriever(settings, glossary.get())
    return GlossaryReloader(settings.rag, glossary, retriever, interval_s=0.1), data / "glossary" / "entries.yaml"


def _edit(path: Path, change: object) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(document["entries"])  # type: ignore[operator]
    # written beside and renamed, as an editor or a deploy would: a reader never sees half a file
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    tmp.replace(path)


def test_an_added_entry_is_searchable_after_one_poll(live: tuple[GlossaryReloader, Path]) -> None:
    reloader, path = live
    retriever = reloader.retriever
    before = retriever.search("что такое ТеплоКуб?")
    assert not before.in_scope or before.hits[0].entry.id != NEW_ENTRY["id"]
    assert reloader.check() is None, "nothing changed yet"

    _edit(path, lambda entries: entries.append(NEW_ENTRY))
    reload = reloader.check()
    assert reload is not None and reload.entries == len(retriever.entries)
    after = retriever.search("что такое ТеплоКуб?")
    assert after.in_scope and after.hits[0].entry.id == NEW_ENTRY["id"]
    # the dense side knows it too (the vector was embedded and loaded, not only BM25)
    dense = retriever.rank("шкаф жидкостного охлаждения серверов", methods=("dense",))["dense"]
    assert retriever.entries[dense.order[0]].id == NEW_ENTRY["id"]
    assert reloader.check() is None, "the same version is not reloaded twice"


def test_a_changed_definition_replaces_the_old_one(live: tuple[GlossaryReloader, Path]) -> None:
    reloader, path = live
    target = reloader.retriever.search("что такое KV cache").hits[0].entry

    def rewrite(entries: list[dict[str, object]]) -> None:
        for raw in entries:
            if raw["id"] == target.id:
                raw["definition"] = "Новое определение для проверки перезагрузки глоссария."

    _edit(path, rewrite)
    assert reloader.check() is not None
    entry = next(e for e in reloader.retriever.entries if e.id == target.id)
    assert entry.definition == "Новое определение для проверки перезагрузки глоссария."


def test_an_edit_that_does_not_parse_keeps_the_old_glossary(live: tuple[GlossaryReloader, Path]) -> None:
    reloader, path = live
    served = reloader.retriever.index
    path.write_text("entries: [ {id: broken", encoding="utf-8")
    assert reloader.check() is None
    assert reloader.retriever.index is served
    assert reloader.retriever.search("что такое KV cache").in_scope


def test_searches_during_a_reload_see_one_whole_glossary(live: tuple[GlossaryReloader, Path]) -> None:
    """A search runs on one index snapshot: while the swap happens, every result is either the old
    glossary's or the new one's, never an entry position of one looked up in the other."""
    reloader, path = live
    retriever = reloader.retriever
    _edit(path, lambda entries: entries.insert(0, NEW_ENTRY))  # shifts every position by one
    errors: list[BaseException] = []
    done = threading.Event()

    def search_loop() -> None:
        while not done.is_set():
            try:
                result = retriever.search("что такое KV cache", k=3)
                assert "KV" in result.hits[0].entry.term or "kv" in result.hits[0].entry.id, result.hits[0]
            except BaseException as exc:  # reported by the main thread below
                errors.append(exc)
                return

    threads = [threading.Thread(target=search_loop) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        assert reloader.check() is not None
    finally:
        done.set()
        for thread in threads:
            thread.join()
    assert not errors, errors[0]
    assert retriever.entries[0].id == NEW_ENTRY["id"]
