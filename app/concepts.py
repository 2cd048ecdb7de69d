"""Whether a message names a glossary concept by its Latin headword or alias (DDP, QLoRA, offloading), GPU and
model names aside: «ddp на двух картах по 24 гб — влезет модель побольше?» asks what DDP does, not which model
to fit."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rag.glossary import GlossaryEntry

# hardware words every fit question has: naming them asks no concept
_GENERIC = frozenset({"gpu", "gpus", "vram", "ram", "cpu", "memory", "gb", "gib"})
_LATIN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 .+_/-]*[A-Za-z0-9+]$")


class ConceptNames:
    def __init__(self, entries: Sequence[GlossaryEntry], catalog_names: Iterable[str]) -> None:
        taken = {name.lower() for name in catalog_names} | _GENERIC
        names = {name.lower() for entry in entries for name in entry.names
                 if _LATIN_NAME.match(name) and name.lower() not in taken and len(name) > 1}
        # the longest first, so "kv cache" is found before "kv"
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        self._pattern = re.compile(rf"(?i)(?<![\w-])({alternatives})(?![\w-])") if names else None

    def named(self, text: str) -> str | None:
        """The first concept name the message writes, or None."""
        if self._pattern is None:
            return None
        found = self._pattern.search(text)
        return found.group(1).lower() if found else None
