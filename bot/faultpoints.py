"""Test-only crash points for tests/faults (never set in production; each check is one attribute read).

``ANCHORGPU_TEST_CRASH_FLAG=/path/to/flag``: when that file exists and holds a point's name, the process
deletes the file and SIGKILLs itself at that point — exactly the "killed between storing a quote and
replying" case the fault suite needs. Deleting first makes the crash happen once, so the restarted process
handles the redelivered update normally.

A stall point (:func:`stall_point`) holds every update that reaches it for as long as the file holds its
name, so that a test can kill the process with many updates in flight; removing the file lets them go.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _armed(settings: Any, name: str) -> Path | None:
    flag = getattr(getattr(settings, "data", None), "test_crash_flag", None)
    if flag is None:
        return None
    try:
        return flag if flag.read_text().strip() == name else None
    except OSError:
        return None


def crash_point(settings: Any, name: str) -> None:
    flag = _armed(settings, name)
    if flag is not None:
        flag.unlink(missing_ok=True)
        os.kill(os.getpid(), signal.SIGKILL)


async def stall_point(settings: Any, name: str, subject: object = None) -> None:
    """Hold here while armed; the log says what is held (``subject``: e.g. the update id), once."""
    if _armed(settings, name) is None:
        return
    log.warning("stall point %s holds %s", name, subject)
    while _armed(settings, name) is not None:  # noqa: ASYNC110 - a file, not an event of ours
        await asyncio.sleep(0.1)
