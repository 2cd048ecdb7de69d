"""Citation marks in the model's text: ``[n]`` numbers checked against the context, renumbered to match the
sources list, and filtered while streaming (an unfinished ``[1`` is held back until it closes)."""

from __future__ import annotations

import re
from collections.abc import Sequence

CITATION = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\s*\]")
_MAX_PENDING = 16  # longest "[1, 2, 3]"-like group worth holding back while streaming


def _rewrite(group: str, allowed: int, cited: list[int]) -> str:
    kept = []
    for part in re.split(r"[,;]", group):
        number = int(part.strip())
        if 1 <= number <= allowed and number not in kept:
            kept.append(number)
    for number in kept:
        if number not in cited:
            cited.append(number)
    return "".join(f"[{n}]" for n in kept)


def verify_citations(text: str, allowed: int) -> tuple[str, list[int]]:
    """Drop citations to entries that were not in the context; return the text and the cited numbers.

    ``[1, 3]`` becomes ``[1][3]``; ``[7]`` with five entries disappears.
    """
    cited: list[int] = []
    cleaned = CITATION.sub(lambda m: _rewrite(m.group(1), allowed, cited), text)
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    return cleaned.strip(), cited


def strip_citations(text: str) -> str:
    return re.sub(r"\s*" + CITATION.pattern, "", text)


class CitationStreamFilter:
    """Applies :func:`verify_citations` to a stream of deltas, holding back only an unfinished ``[...``.

    With ``renumber`` the citations are numbered in order of first appearance ([1], [2], ...), the way
    the final answer numbers its sources, so the streamed draft and the final text usually agree.
    """

    def __init__(self, allowed: int, renumber: bool = False) -> None:
        self.allowed = allowed
        self.renumber = renumber
        self.cited: list[int] = []
        self._pending = ""

    def _citation(self, group: str) -> str:
        text = _rewrite(group, self.allowed, self.cited)
        return renumber_citations(text, self.cited) if self.renumber else text

    def feed(self, delta: str) -> str:
        text = self._pending + delta
        self._pending = ""
        out: list[str] = []
        while text:
            start = text.find("[")
            if start < 0:
                out.append(text)
                break
            out.append(text[:start])
            end = text.find("]", start)
            reopened = text.find("[", start + 1)
            if reopened >= 0 and (end < 0 or reopened < end):
                out.append(text[start:reopened])
                text = text[reopened:]
                continue
            if end < 0:
                tail = text[start:]
                if len(tail) <= _MAX_PENDING and re.fullmatch(r"\[[\d\s,;]*", tail):
                    self._pending = tail
                else:
                    out.append(tail)
                break
            candidate = text[start:end + 1]
            match = CITATION.fullmatch(candidate)
            out.append(self._citation(match.group(1)) if match else candidate)
            text = text[end + 1:]
        return "".join(out)

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return pending


def renumber_citations(text: str, cited: Sequence[int]) -> str:
    """Renumber ``[n]`` so the cited entries become [1], [2], ... in the order of ``cited`` (the sources)."""
    mapping = {old: new for new, old in enumerate(cited, start=1)}

    def rewrite(match: re.Match[str]) -> str:
        numbers = [int(part) for part in re.split(r"[,;]", match.group(1))]
        return "".join(f"[{mapping[n]}]" for n in numbers if n in mapping)

    return CITATION.sub(rewrite, text)
