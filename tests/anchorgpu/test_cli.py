from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from anchorgpu.cli import COMMAND_MODULES, main
from anchorgpu.cli.bench import UNAVAILABLE
from infra.settings import RAGSettings

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for name in ("chat", "ask", "search", "fit", "quote", "run", "ingest", "bench"):
        assert name in out
    assert set(COMMAND_MODULES) >= {"chat", "ask", "search", "fit", "quote", "run", "ingest", "bench"}


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_each_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([name, "--help"])
    assert info.value.code == 0
    assert "usage: anchorgpu " + name in capsys.readouterr().out


def test_mistyped_subcommand_suggests_the_right_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["qoute"])
    assert info.value.code == 2
    assert "did you mean: quote" in capsys.readouterr().err


def test_bench_is_an_entry_into_the_dev_tree_from_any_folder(tmp_path: Path) -> None:
    """scripts/setup.sh makes the checkout's dev/ importable in the venv, not only from the repository root."""
    done = subprocess.run([sys.executable, "-m", "anchorgpu", "bench", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in ("fit", "quote", "routing", "bot", "load", "soak"):
        assert name in done.stdout


def test_bench_without_the_dev_tree_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """An installed wheel or the Docker image has no dev/: one line and exit code 2, not a traceback."""
    monkeypatch.setitem(sys.modules, "dev", None)
    monkeypatch.setitem(sys.modules, "dev.bench", None)
    assert main(["bench", "fit", "llama-3.1-8b"]) == 2
    assert capsys.readouterr().err == UNAVAILABLE + "\n"


@pytest.mark.long
def test_console_chat_answers_help_without_a_token(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "models").symlink_to(REPO_ROOT / "var" / "models")
    caches = RAGSettings()  # a fresh state folder on the machine's vector caches, as `make run`'s set-up leaves them
    env = {"PATH": "/usr/bin:/bin", "ANCHORGPU_STATE_DIR": str(state), "HOME": str(tmp_path),
           "HF_HUB_OFFLINE": "1", "RAG_VECTOR_CACHE_DIR": str(caches.vector_cache_dir),
           "RAG_ROUTER_CACHE_DIR": str(caches.router_cache_dir)}
    result = subprocess.run([sys.executable, "-m", "anchorgpu", "run", "--lang", "en"], input="/help\n/quit\n",
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "console chat" in result.stderr
    assert "/fit MODEL" in result.stdout
