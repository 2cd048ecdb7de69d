"""README.md and docs/*.md: the size budget, and every repository path and subcommand they name is real."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import pytest

from anchorgpu.cli import COMMAND_MODULES

REPO_ROOT = Path(__file__).resolve().parents[2]
README = REPO_ROOT / "README.md"
DOCS = sorted((REPO_ROOT / "docs").glob("*.md"))
README_BUDGET = 12_288
EXPECTED_PAGES = {"architecture.md", "answering.md", "telegram.md", "operations.md", "configuration.md"}
TOP_DIRS = ("bot", "app", "rag", "gpu", "models", "infra", "anchorgpu", "tools", "dev", "scripts", "tests", "data",
            "docs", "deploy")
# `bot/app.py`, `tests/faults/test_faults.py::test_x`, data/glossary/: not after a word, a dot, a slash or a dash
# (URLs, `.venv/bin`, `/app/var` inside the image)
REPO_PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP_DIRS) + r")/[\w./*<>…-]*)")
# a backticked file name: `Makefile` is not one, `prices.yaml` and `infra/settings.py` are
FILE_NAME = re.compile(r"`([\w./-]+\.(?:py|yaml|yml|sh|toml|md))(?:::\w+)?`")
PLACEHOLDERS = ("<", "*", "…", "NNNN")
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__"}


def _documents() -> list[Path]:
    return [README, *DOCS]


@lru_cache(maxsize=1)
def _file_names() -> frozenset[str]:
    names: set[str] = set()
    for _folder, subfolders, files in os.walk(REPO_ROOT):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED_DIRS]
        names.update(files)
    return frozenset(names)


def named_paths(text: str) -> set[str]:
    """The repository paths and backticked file names a document names."""
    found = {match.rstrip(".,;:") for match in REPO_PATH.findall(text)}
    found |= set(FILE_NAME.findall(text))
    return {path for path in found if not any(mark in path for mark in PLACEHOLDERS)}


def missing(text: str) -> list[str]:
    gone = []
    for path in sorted(named_paths(text)):
        # a bare file name: some file of the repository has it
        exists = (REPO_ROOT / path).exists() if "/" in path else path in _file_names()
        if not exists:
            gone.append(path)
    return gone


def test_readme_fits_its_budget() -> None:
    size = len(README.read_bytes())
    assert size <= README_BUDGET, f"README.md is {size} bytes, over {README_BUDGET}: move detail into docs/"


def test_the_docs_pages_exist_and_the_readme_links_each() -> None:
    assert {page.name for page in DOCS} >= EXPECTED_PAGES
    readme = README.read_text(encoding="utf-8")
    for page in EXPECTED_PAGES:
        assert f"](docs/{page})" in readme, f"README.md does not link docs/{page}"


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_path_a_document_names_exists(document: Path) -> None:
    gone = missing(document.read_text(encoding="utf-8"))
    assert not gone, f"{document.relative_to(REPO_ROOT)} names paths that do not exist: {gone}"


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_resolves(document: Path) -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", document.read_text(encoding="utf-8"))
    local = [t for t in targets if "://" not in t]
    gone = [t for t in local if not (document.parent / t).exists()]
    assert not gone, f"{document.relative_to(REPO_ROOT)} links to missing files: {gone}"


def test_the_readme_lists_every_subcommand() -> None:
    readme = README.read_text(encoding="utf-8")
    listed = set(re.findall(r"`anchorgpu (\w+)", readme)) | set(re.findall(r"· `(\w+) ", readme))
    assert listed >= set(COMMAND_MODULES), f"missing from the README's table: {set(COMMAND_MODULES) - listed}"
    assert listed <= {*COMMAND_MODULES, "help"}, f"not subcommands: {listed - set(COMMAND_MODULES)}"


def test_the_readme_lists_every_benchmark() -> None:
    bench_dir = REPO_ROOT / "dev" / "bench"
    benchmarks = {p.stem for p in bench_dir.glob("*.py") if not p.stem.startswith("_")}
    assert benchmarks, "no benchmarks found"
    line = next(line for line in README.read_text(encoding="utf-8").splitlines() if "`anchorgpu bench NAME`" in line)
    assert set(re.findall(r"`(\w+)`", line)) >= benchmarks


def test_the_path_finder_catches_a_stale_path() -> None:
    text = "see `anchorgpu/db.py`, bot/routers/prices.py, `no_such_file.yaml` and rag/verification/alignment.py"
    assert missing(text) == ["anchorgpu/db.py", "bot/routers/prices.py", "no_such_file.yaml"]
    assert named_paths("https://example.com/docs/x.md and /app/var and `.venv/bin/ruff`") == set()
