"""Telegram HTML: a splitter that respects the 4096 limit (escaping is :mod:`infra.markup`'s).

Telegram counts the limit in UTF-16 code units of the *visible* text (after entity parsing), so the
splitter works on parsed atoms — tags, entities and characters — and never cuts inside a tag, an entity or
a surrogate pair. Tags open at a cut are closed at the end of one chunk and reopened (with the same
attributes, e.g. ``<pre><code class="language-python">``) at the start of the next one, so every chunk is
valid HTML on its own and a code block stays a code block.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from infra.markup import escape

TELEGRAM_LIMIT = 4096
# Where a cut looks natural, best first: a paragraph break, a line break, a sentence end, a space.
_BREAK_PRIORITY = ("\n\n", "\n", ". ", " ")
_TAG_RE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s[^<>]*)?)>")
_ENTITY_RE = re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def strip_tags(html_text: str) -> str:
    """The visible text of Telegram HTML: tags dropped, entities decoded (for the plain-text fallback)."""
    return html.unescape(_TAG_RE.sub("", html_text))


# ---- splitting ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Atom:
    raw: str
    visible: str  # what Telegram shows ("" for tags)
    tag: str | None = None  # tag name for tags
    closing: bool = False


def _atoms(html_text: str) -> list[_Atom]:
    atoms: list[_Atom] = []
    pos = 0
    length = len(html_text)
    while pos < length:
        char = html_text[pos]
        if char == "<":
            match = _TAG_RE.match(html_text, pos)
            if match:
                atoms.append(_Atom(raw=match.group(0), visible="", tag=match.group(2).lower(),
                                   closing=bool(match.group(1))))
                pos = match.end()
                continue
        elif char == "&":
            match = _ENTITY_RE.match(html_text, pos)
            if match:
                atoms.append(_Atom(raw=match.group(0), visible=html.unescape(match.group(0))))
                pos = match.end()
                continue
        atoms.append(_Atom(raw=char, visible=char))
        pos += 1
    return atoms


def _close(stack: Sequence[tuple[str, str]]) -> str:
    return "".join(f"</{name}>" for name, _ in reversed(stack))


def _reopen(stack: Sequence[tuple[str, str]]) -> str:
    return "".join(raw for _, raw in stack)


def _break_index(atoms: Sequence[_Atom], start: int, end: int) -> int:
    """The atom index to cut before, in (start, end]: the most natural break in the second half."""
    window_from = start + max(1, (end - start) // 2)
    # One character per atom so that string offsets are atom offsets.
    text = "".join(a.visible if len(a.visible) == 1 else "\x00" for a in atoms[window_from:end])
    for separator in _BREAK_PRIORITY:
        found = text.rfind(separator)
        if found > 0 or (found == 0 and window_from > start):
            return window_from + found + len(separator)
    return end


def _balanced(html_text: str) -> bool:
    stack: list[str] = []
    for match in _TAG_RE.finditer(html_text):
        closing, name, attributes = match.group(1), match.group(2).lower(), match.group(3)
        if closing:
            if not stack or stack.pop() != name:
                return False
        elif not attributes.endswith("/"):
            stack.append(name)
    return not stack


def split_html(html_text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split valid Telegram HTML into chunks of at most ``limit`` visible UTF-16 units each.

    Every chunk is balanced HTML with some visible text; the concatenated visible text equals the input's
    except for whitespace trimmed at the cuts.
    """
    if limit < 16:
        raise ValueError("limit too small to make progress")
    if utf16_len(html_text) <= limit and _balanced(html_text):
        # Most replies are short: the raw text bounds the visible text, so it is one chunk as it is.
        text = html_text.lstrip()
        return [text] if strip_tags(text).strip() else []
    return _split_atoms(html_text, limit)


def _split_atoms(html_text: str, limit: int) -> list[str]:
    atoms = _atoms(html_text)
    chunks: list[str] = []
    stack: list[tuple[str, str]] = []  # open tags (name, raw start tag) at the start of the current chunk
    index = 0
    while index < len(atoms):
        # Skip whitespace at a chunk start: Telegram trims it anyway and it must not count.
        while index < len(atoms) and atoms[index].tag is None and atoms[index].visible.isspace():
            index += 1
        if index >= len(atoms):
            break
        # Find how far the visible budget reaches.
        used = 0
        end = index
        while end < len(atoms):
            width = utf16_len(atoms[end].visible)
            if used + width > limit:
                break
            used += width
            end += 1
        cut = end if end >= len(atoms) else _break_index(atoms, index, end)
        body_stack = list(stack)
        parts = [_reopen(stack)]
        for atom in atoms[index:cut]:
            parts.append(atom.raw)
            if atom.tag is not None:
                if atom.closing:
                    if body_stack and body_stack[-1][0] == atom.tag:
                        body_stack.pop()
                elif not atom.raw.endswith("/>"):
                    body_stack.append((atom.tag, atom.raw))
        chunk = "".join(parts) + _close(body_stack)
        if any(atom.visible.strip() for atom in atoms[index:cut]):
            chunks.append(chunk)
        stack = body_stack
        index = cut
    return chunks


def split_plain(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split plain text (no markup) at natural breaks into chunks of at most ``limit`` UTF-16 units."""
    return [strip_tags(chunk) for chunk in split_html(escape(text), limit)]


def truncate_preview(text: str, limit: int = TELEGRAM_LIMIT - 96) -> str:
    """A plain-text streaming preview that fits one message: the tail is what the user is reading."""
    if utf16_len(text) <= limit:
        return text
    tail = text[-limit:]
    while utf16_len(tail) > limit - 1:
        tail = tail[1:]
    return "…" + tail
