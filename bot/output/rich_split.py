"""A report split under a rich message's documented limits: 500 blocks per message counting every table
row, 20 columns, 32,768 characters (:func:`split_report`; sent by :mod:`bot.output.rich`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.views.table import Block, Report, Table, Text
from bot.output.rendering import utf16_len
from infra.i18n import Lang, t

MAX_BLOCKS = 500  # per message, nested blocks and table rows included
MAX_COLUMNS = 20
MAX_CHARS = 32_768
MAX_PARTS = 4  # a reply longer than this many messages is cut (with a note), not sent as a flood


@dataclass(frozen=True)
class _Cost:
    blocks: int
    chars: int


def _table_chars(table: Table) -> int:
    cells = [*table.headers, *(cell for row in table.rows for cell in row), *(table.total or ())]
    return sum(utf16_len(cell) for cell in cells) + utf16_len(table.caption or "")


def _cost(block: Block) -> _Cost:
    if isinstance(block, Text):
        return _Cost(1, utf16_len(block.text))
    return _Cost(1 + 1 + len(block.rows) + (1 if block.total else 0), _table_chars(block))


def _narrow(table: Table, lang: Lang) -> list[Block]:
    """At most MAX_COLUMNS columns, with a note when some were dropped."""
    width = len(table.headers)
    if width <= MAX_COLUMNS:
        return [table]
    cut = Table(headers=table.headers[:MAX_COLUMNS], rows=tuple(row[:MAX_COLUMNS] for row in table.rows),
                align=table.align[:MAX_COLUMNS], caption=table.caption,
                total=table.total[:MAX_COLUMNS] if table.total else None)
    return [cut, Text(t("rich_truncated_columns", lang, shown=MAX_COLUMNS, total=width), note=True)]


def split_report(report: Report, lang: Lang, max_blocks: int = MAX_BLOCKS, max_chars: int = MAX_CHARS,
                 max_parts: int = MAX_PARTS) -> list[Report]:
    """The report as one or more reports that each fit in one rich message (the title on the first)."""
    if _surely_fits(report, max_blocks, max_chars):
        return [report]
    blocks = [piece for block in report.blocks
              for piece in (_narrow(block, lang) if isinstance(block, Table) else [block])]
    note_room = _Cost(1, 200)  # a truncation note must still fit in the last part
    parts: list[list[Block]] = [[]]
    used = _Cost(1, utf16_len(report.title))  # the heading

    def room_for(cost: _Cost) -> bool:
        return used.blocks + cost.blocks <= max_blocks and used.chars + cost.chars <= max_chars

    def next_part() -> bool:
        nonlocal used
        if len(parts) >= max_parts:
            return False
        parts.append([])
        used = _Cost(0, 0)
        return True

    for index, block in enumerate(blocks):
        cost = _cost(block)
        if room_for(cost):
            parts[-1].append(block)
            used = _Cost(used.blocks + cost.blocks, used.chars + cost.chars)
            continue
        if isinstance(block, Text):
            if not next_part():
                return _finish(report, parts, lang, block_index=index, blocks=blocks)
            parts[-1].append(block)
            used = cost
            continue
        rows, shown, first = list(block.rows), 0, True
        while rows:
            reserve = note_room if len(parts) >= max_parts else _Cost(0, 0)
            # the head carries the total row too: a chunk that turns out to be the last has room for it
            head = replace(block, rows=(), caption=block.caption if first else None)
            take = _rows_that_fit(head, rows, _room(used, max_blocks, max_chars, reserve))
            if take == 0:
                if parts[-1]:
                    if not next_part():
                        return _finish(report, parts, lang, block_index=index, blocks=blocks,
                                       table_rows=(shown, len(block.rows)))
                    continue
                take = 1  # one row larger than a whole message: sent alone, Telegram has the last word
            chunk, rows = rows[:take], rows[take:]
            shown += take
            piece = replace(block, rows=tuple(chunk), total=None if rows else block.total,
                            caption=block.caption if first else None)
            first = False
            parts[-1].append(piece)
            piece_cost = _cost(piece)
            used = _Cost(used.blocks + piece_cost.blocks, used.chars + piece_cost.chars)
    return [Report(title=report.title if number == 0 else "", blocks=tuple(part))
            for number, part in enumerate(parts) if part or number == 0]


def _surely_fits(report: Report, max_blocks: int, max_chars: int) -> bool:
    """A cheap upper bound (a code point is at most two UTF-16 units): most replies need no exact count."""
    blocks, chars = 1, len(report.title)
    for block in report.blocks:
        if isinstance(block, Text):
            blocks, chars = blocks + 1, chars + len(block.text)
            continue
        if len(block.headers) > MAX_COLUMNS:
            return False
        blocks += 2 + len(block.rows) + (1 if block.total else 0)
        chars += len(block.caption or "") + sum(map(len, block.headers)) + sum(map(len, block.total or ())) \
            + sum(len(cell) for row in block.rows for cell in row)
    return blocks <= max_blocks and 2 * chars <= max_chars


def _room(used: _Cost, max_blocks: int, max_chars: int, reserve: _Cost) -> _Cost:
    return _Cost(max_blocks - used.blocks - reserve.blocks, max_chars - used.chars - reserve.chars)


def _rows_that_fit(head: Table, rows: Sequence[tuple[str, ...]], room: _Cost) -> int:
    cost = _cost(head)
    blocks, chars = cost.blocks, cost.chars
    taken = 0
    for row in rows:
        row_chars = sum(utf16_len(cell) for cell in row)
        if blocks + 1 > room.blocks or chars + row_chars > room.chars:
            break
        blocks += 1
        chars += row_chars
        taken += 1
    return taken


def _finish(report: Report, parts: list[list[Block]], lang: Lang, *, block_index: int, blocks: list[Block],
            table_rows: tuple[int, int] | None = None) -> list[Report]:
    """Out of messages: end the last part with a note of what was left out."""
    if table_rows is not None:
        shown, total = table_rows
    else:
        shown = sum(len(b.rows) for b in blocks[:block_index] if isinstance(b, Table))
        total = sum(len(b.rows) for b in blocks if isinstance(b, Table))
    parts[-1].append(Text(t("rich_truncated_rows", lang, shown=shown, total=total), note=True))
    return [Report(title=report.title if number == 0 else "", blocks=tuple(part))
            for number, part in enumerate(parts)]


