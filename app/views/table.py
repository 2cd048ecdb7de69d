"""Replies that are tables, as data: the fronts draw them (Telegram rich blocks, or HTML as a fallback).

A :class:`Report` is a title, then text and tables in order. Every header, caption and note is already in
the user's language (the i18n catalog); cells are display strings (money and numbers formatted by the
views), so a front only lays them out. Nothing here knows Telegram.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from infra.markup import PLAIN, Markup

Align = Literal["left", "center", "right"]


@dataclass(frozen=True)
class Text:
    """A paragraph; ``bold`` for a sub-heading inside the reply, ``note`` for a smaller footer line."""

    text: str
    bold: bool = False
    note: bool = False


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[Align, ...] = ()  # per column; missing columns align left
    caption: str | None = None
    total: tuple[str, ...] | None = None  # a last row set apart (shown as header cells)

    def __post_init__(self) -> None:
        width = len(self.headers)
        for row in (*self.rows, *((self.total,) if self.total else ())):
            if len(row) != width:
                raise ValueError(f"a row has {len(row)} cells, the table {width} columns")

    def align_of(self, column: int) -> Align:
        return self.align[column] if column < len(self.align) else "left"


Block = Text | Table


@dataclass(frozen=True)
class Report:
    title: str
    blocks: tuple[Block, ...] = field(default_factory=tuple)

    def tables(self) -> list[Table]:
        return [block for block in self.blocks if isinstance(block, Table)]


def render_report(report: Report, markup: Markup = PLAIN) -> str:
    """The report as lines of text or Telegram HTML: a table becomes one line per row, cells joined by ·.

    For a front that has no tables (the rest of a split rich reply that Telegram refused half-way).
    """
    lines = [markup.bold(report.title)] if report.title else []
    for block in report.blocks:
        if isinstance(block, Text):
            lines.append(markup.bold(block.text) if block.bold else
                         markup.italic(block.text) if block.note else markup.text(block.text))
            continue
        if block.caption:
            lines.append(markup.bold(block.caption))
        lines.append(markup.text(" · ".join(block.headers)))
        lines.extend(markup.text(" · ".join(row)) for row in block.rows)
        if block.total:
            lines.append(markup.bold(" · ".join(block.total)))
    return "\n".join(lines)
