"""One owner per data file: a file under ``data/`` is parsed by one :class:`DataFile` and re-read when an
operator changes it.

Every reader of a catalog or the price list goes through its owner, so after an edit every command sees
the same new version (``/quote``, ``/fit``'s cheapest configurations and ``/gpus`` cannot disagree). A
change is noticed with one ``stat()`` per access (nanosecond mtime and size). An edit that does not parse
keeps the last good version serving and is logged once; a file that never parsed raises.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
Signature = tuple[int, int]  # (mtime_ns, size)


class DataFile(Generic[T]):
    def __init__(self, path: Path, parse: Callable[[Path], T]) -> None:
        self.path = path
        self._parse = parse
        self._value: T | None = None
        self._signature: Signature | None = None
        self._rejected: Signature | None = None
        self._lock = threading.Lock()  # retrieval and fit run in worker threads too
        self.version = 0  # bumped on every successful (re)load: consumers rebuild what they derive from it

    def _stat(self) -> Signature | None:
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def get(self) -> T:
        signature = self._stat()
        if self._value is not None and signature in (self._signature, self._rejected):
            return self._value
        with self._lock:
            if self._value is not None and signature in (self._signature, self._rejected):
                return self._value
            try:
                value = self._parse(self.path)
            except Exception as exc:
                if self._value is None:
                    raise
                self._rejected = signature
                log.error("%s changed but cannot be used, keeping the previous version: %s", self.path, exc)
                return self._value
            if self._value is not None:
                log.info("reloaded %s", self.path)
            self._value, self._signature, self._rejected = value, signature, None
            self.version += 1
            return value
