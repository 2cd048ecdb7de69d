"""A bug while answering one console line is one apology with an error id; the chat goes on."""

from __future__ import annotations

import io
from typing import Any, cast

import pytest

from anchorgpu.console import ConsoleChat


class _Intents:
    def classify(self, line: str) -> Any:
        raise RuntimeError("a bug in the classifier")


class _Services:
    intents = _Intents()


async def test_a_failing_line_is_apologised_for_and_the_next_one_is_read(caplog: pytest.LogCaptureFixture) -> None:
    out = io.StringIO()
    chat = ConsoleChat(cast(Any, _Services()), lang="en", out=out)
    await chat.handle("what is nvlink")
    shown = out.getvalue()
    assert "Sorry, something went wrong. Error id: " in shown and "Traceback" not in shown
    error_id = shown.rsplit("Error id: ", 1)[1].strip()
    assert any(error_id in record.getMessage() and record.exc_info for record in caplog.records)
    await chat.handle("and again")  # the chat is still reading: the next line gets its own apology
    assert out.getvalue().count("Error id: ") == 2 and error_id not in out.getvalue().rsplit("Error id: ", 1)[1]
