"""The test index kept between runs: only a finished build is kept, never a lock, and an unchanged one is not
rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rag import support


def test_a_built_index_is_kept_without_its_locks_and_only_rewritten_when_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(support, "KEPT_INDEXES", tmp_path / "kept")
    embedder = f"keep-test-{tmp_path.name}"
    built = support.shared_chroma_dir(embedder)
    (built / "index.bin").write_bytes(b"vectors")
    (built / "writer.lock").write_text("")
    (built / "router").mkdir()
    (built / "router" / "routes.npy").write_bytes(b"routes")

    support.keep_index(embedder)
    kept = tmp_path / "kept" / f"chroma-{embedder}"
    assert sorted(str(p.relative_to(kept)) for p in kept.rglob("*")) == ["index.bin", "router", "router/routes.npy"]

    before = (kept / "index.bin").stat().st_ino
    support.keep_index(embedder)
    assert (kept / "index.bin").stat().st_ino == before  # nothing changed, nothing rewritten

    (built / "router" / "routes.npy").write_bytes(b"other routes")
    support.keep_index(embedder, part="router")
    assert (kept / "router" / "routes.npy").read_bytes() == b"other routes"
    assert (kept / "index.bin").stat().st_ino == before  # the part only
    assert not list(tmp_path.joinpath("kept").glob("*.tmp")) and not list(tmp_path.joinpath("kept").glob("*.old"))
