"""The codebase's own rules, the ones import-linter cannot state (its contracts are in pyproject.toml):
the domain says things as Phrases and never renders them, and no module of rag/ or bot/ grows past
400 lines without its docstring saying why."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = ("rag", "gpu")
MAX_LINES = 400


def _modules(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


def _renders_prose(tree: ast.Module) -> list[str]:
    """The i18n renderers a module imports (``t``, ``render``): the domain hands Phrases to the fronts."""
    return [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "infra.i18n" for alias in node.names if alias.name in {"t", "render", "has"}]


def test_the_domain_returns_phrases_never_prose() -> None:
    offenders = {str(path.relative_to(ROOT)): names for path in _modules(*DOMAIN)
                 if (names := _renders_prose(ast.parse(path.read_text(encoding="utf-8"))))}
    assert offenders == {}, "the domain returns Phrase objects; app/views and the fronts render them"


def test_the_rule_sees_a_renderer_imported() -> None:
    tree = ast.parse("from infra.i18n import Lang, t\nfrom infra.i18n import Phrase\n")
    assert _renders_prose(tree) == ["t"]


def test_no_module_in_rag_or_bot_is_over_400_lines_unless_it_says_why() -> None:
    long = []
    for path in _modules("rag", "bot"):
        text = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if len(text.splitlines()) > MAX_LINES and "400 lines" not in docstring:
            long.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
    assert long == []
