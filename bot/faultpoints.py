"""Test-only crash points for tests/faults (never set in production; each check is one attribute read).

``ANCHORGPU_TEST_CRASH_FLAG=/path/to/flag``: when that file exists and holds a point's name, the process
deletes the file and SIGKILLs itself at that point — exactly the "killed between storing a quote and
replying" case the fault suite needs. Deleting first makes the crash happen once, so the restarted process
handles the redelivered update normally.
"""

from __future__ import annotations

import os
import signal
from typing import Any


def crash_point(settings: Any, name: str) -> None:
    flag = getattr(getattr(settings, "data", None), "test_crash_flag", None)
    if flag is None:
        return
    try:
        armed = flag.read_text().strip() == name
    except OSError:
        return
    if armed:
        flag.unlink(missing_ok=True)
        os.kill(os.getpid(), signal.SIGKILL)
