"""The console chat as a person sees it: driven through a pseudo-terminal, as `make run` without a token.

On a terminal, no library log line below WARNING reaches the screen (bm25s sets its own logger to DEBUG on
import), a one-line indicator shows while an answer is prepared, and Ctrl+C stops the answer, not the chat.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from infra.settings import RAGSettings
from tests.conftest import REPO_ROOT, SMALL_MODEL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

QUESTION = "why does my training loss become nan with fp16?\n"  # a how/why question: the model writes
TIMEOUT_S = 240.0


class Terminal:
    """A child process on a pseudo-terminal: what it wrote so far, and keys (or signals) sent to it."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: becomes the program, on the terminal's slave side
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.screen = ""
        self.exit_code: int | None = None
        self.closed = False

    def read_until(self, pattern: str, timeout_s: float = TIMEOUT_S, start: int = 0) -> int:
        """Read until ``pattern`` (a regex) appears after ``start``; its position."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = re.compile(pattern).search(self.screen, start)
            if found:
                return found.start()
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} on the screen:\n{self.screen[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    data = b""
                assert data, f"the program ended before {pattern!r}:\n{self.screen[-2000:]}"
                self.screen += data.decode("utf-8", errors="replace")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def interrupt(self) -> None:
        os.kill(self.pid, signal.SIGINT)  # what the terminal sends the foreground process on Ctrl+C

    def close(self) -> int | None:
        """The exit code once the program ended (killed after :data:`TIMEOUT_S`: /quit waits for start-up work
        in threads, the index build of a fresh state dir among it); again the same on a second call."""
        if self.closed:
            return self.exit_code
        self.closed = True
        started = time.monotonic()
        while time.monotonic() - started < TIMEOUT_S:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.exit_code = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.1)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)
        return self.exit_code


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def terminal(tmp_path: Path, state: Path) -> Terminal:
    state.mkdir()
    (state / "models").symlink_to(REPO_ROOT / "var" / "models")
    # a fresh state folder and home, on the machine's vector caches as `make run`'s set-up leaves them
    # (anchorgpu.warm): the first start builds its index but embeds no phrasing or route again
    caches = RAGSettings()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "xterm", "HF_HUB_OFFLINE": "1",
           "RAG_VECTOR_CACHE_DIR": str(caches.vector_cache_dir), "RAG_ROUTER_CACHE_DIR": str(caches.router_cache_dir),
           "ANCHORGPU_STATE_DIR": str(state), "ANCHORGPU_LOG_LEVEL": "DEBUG", "LLM_MODEL_PATH": str(SMALL_MODEL),
           "LLM_ANSWER_MODE": "generate", "PYTHONUNBUFFERED": "1"}
    return Terminal([sys.executable, "-m", "anchorgpu", "run", "--lang", "en"], env, tmp_path)


def test_the_console_shows_an_indicator_before_an_answer_and_no_debug_line(terminal: Terminal, state: Path) -> None:
    try:
        terminal.read_until(r"> ")
        terminal.type("/fit llama 3 8b rtx 4090\n")  # builds the router and the index (bm25s logs at DEBUG)
        terminal.read_until(r"RTX 4090")
        asked = terminal.read_until(r"> ", start=terminal.screen.index("RTX 4090"))
        terminal.type(QUESTION)
        indicator = terminal.read_until(r"… thinking", start=asked)
        answered = terminal.read_until(r"Sources:|From the glossary|glossary", start=indicator)
        assert indicator < answered, "the indicator comes before the answer"
        assert "\r\x1b[K" in terminal.screen[indicator:answered + 40], "and the answer replaces it"
        terminal.read_until(r"\n> ", start=answered)
        terminal.type("/quit\n")
        assert terminal.close() == 0
    finally:
        terminal.close()
    # ANCHORGPU_LOG_LEVEL=DEBUG asked for them: they went to the log file, not onto the conversation
    assert " DEBUG " not in terminal.screen and " INFO " not in terminal.screen, terminal.screen[-2000:]
    assert " DEBUG bm25s" in (state / "console.log").read_text(encoding="utf-8")


def test_ctrl_c_stops_the_answer_not_the_chat(terminal: Terminal) -> None:
    try:
        terminal.read_until(r"> ")
        terminal.type(QUESTION)
        asked = terminal.read_until(r"… thinking")
        terminal.interrupt()
        stopped = terminal.read_until(r"\(stopped\)", start=asked)
        terminal.type("/help\n")
        terminal.read_until(r"/fit MODEL", start=stopped)  # the chat goes on
        terminal.interrupt()  # no answer in progress: a hint, not an exit
        terminal.read_until(r"/quit to leave\)", start=stopped)
        terminal.type("/quit\n")
        assert terminal.close() == 0
    finally:
        terminal.close()
