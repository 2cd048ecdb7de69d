"""Idempotency keys, one implementation for every store that takes them (quotes, placements).

It follows Stripe and the IETF Idempotency-Key draft:

* a key is scoped to its owner: a key table's primary key is ``(owner, key)``, so two owners may use the
  same key independently;
* a key row holds the fingerprint of the normalised request (and whatever the store needs to replay the
  result); the store compares fingerprints: same request -> replay, another request -> its conflict error;
* concurrent requests with one key -> exactly one wins: the key row is claimed with
  ``INSERT … ON CONFLICT (owner, key) DO NOTHING`` inside the transaction that writes the change, so the
  database's UNIQUE constraint decides (no Python lock: it holds across processes and replicas); a loser
  learns it from the claim (:class:`KeyTakenError` or a missing ``RETURNING`` value), rolls back or removes
  its own rows, and replays or refuses against the winner's record (:func:`claim_or_replay`);
* keys are kept at least :data:`MIN_RETENTION_HOURS` (``expires_at``, epoch seconds, compares the same way on
  every backend); a key past retention is invisible to lookups, is dropped when claimed again, and
  :meth:`IdempotencyKeys.purge_expired` forgets them all.

A key table needs the columns ``owner``, ``key`` (together the primary key), ``fingerprint`` and
``expires_at`` (BigInteger); the rest is the store's own.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Connection, Table, and_, delete
from sqlalchemy.ext.asyncio import AsyncEngine

from infra.db import conflict_insert

KEY_PATTERN = re.compile(r"^[A-Za-z0-9._:\-]{4,128}$")
MIN_RETENTION_HOURS = 24

R = TypeVar("R")
F = TypeVar("F")


class KeyTakenError(Exception):
    """The idempotency key is held by another request (the claim was refused); nothing of this one stays."""


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an idempotency key (a sentence for the user), or None when it can."""
    if KEY_PATTERN.match(key):
        return None
    return ("An idempotency key must be 4-128 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-' "
            f"(got {len(key)} characters). A UUID works well.")


def epoch(moment: dt.datetime) -> int:
    return int(moment.timestamp())


class IdempotencyKeys:
    """One key table: building key rows, claiming them in a transaction, finding live ones, expiring them."""

    def __init__(self, engine: AsyncEngine, table: Table, *, retention_hours: int = MIN_RETENTION_HOURS,
                 returning: str) -> None:
        """``returning``: the column a successful claim returns (the id of what the key points to)."""
        if retention_hours < MIN_RETENTION_HOURS:
            raise ValueError(f"idempotency keys must be kept at least {MIN_RETENTION_HOURS} h")
        self.engine = engine
        self.table = table
        self.retention = dt.timedelta(hours=retention_hours)
        # one prepared statement for one key or many (SQLAlchemy sends a list as one multi-row INSERT)
        self._claim = (conflict_insert(engine, table)
                       .on_conflict_do_nothing(index_elements=[table.c.owner, table.c.key])
                       .returning(table.c[returning]))

    def row(self, owner: str, key: str, fingerprint: str, now: dt.datetime, **columns: Any) -> dict[str, Any]:
        """The key row to claim: the key, the request's fingerprint, its expiry and the store's columns."""
        return dict(owner=owner, key=key, fingerprint=fingerprint, **columns,
                    expires_at=epoch(now + self.retention))

    def claim(self, conn: Connection, row: dict[str, Any]) -> None:
        """Claim one key inside the caller's transaction; :class:`KeyTakenError` (which rolls it back) if
        the key is held."""
        if conn.execute(self._claim, row).first() is None:
            raise KeyTakenError

    def claim_many(self, conn: Connection, rows: Iterable[dict[str, Any]]) -> set[Any]:
        """Claim several keys at once; returns the ``returning`` values of the rows that got their key
        (the caller removes what the others wrote)."""
        rows = list(rows)
        if not rows:
            return set()
        return set(conn.execute(self._claim, rows).scalars())

    def live(self, owner: str, key: str, now: dt.datetime) -> ColumnElement[bool]:
        """The WHERE clause of a lookup: this owner's key, unless past retention."""
        table = self.table
        return and_(table.c.owner == owner, table.c.key == key, table.c.expires_at > epoch(now))

    async def drop_stale(self, owner: str, key: str, now: dt.datetime) -> None:
        """Forget this owner's key if it is past retention (then it may be claimed again)."""
        table = self.table
        async with self.engine.begin() as conn:
            await conn.execute(delete(table).where(table.c.owner == owner, table.c.key == key,
                                                   table.c.expires_at <= epoch(now)))

    async def purge_expired(self, now: dt.datetime) -> int:
        """Forget every key past retention (what they point to stays); returns how many were removed."""
        table = self.table
        async with self.engine.begin() as conn:
            result = await conn.execute(delete(table).where(table.c.expires_at <= epoch(now)))
        return int(result.rowcount or 0)


async def claim_or_replay(attempt: Callable[[], Awaitable[R]], *, key: str | None,
                          find: Callable[[], Awaitable[F | None]], replay: Callable[[F], R],
                          drop_stale: Callable[[], Awaitable[None]]) -> R:
    """Write optimistically; when the key is taken, answer from the record that holds it.

    ``attempt`` writes the change and claims the key in one transaction, raising :class:`KeyTakenError`
    when another request holds the key. Then ``find`` reads the holder's live record and ``replay`` answers
    from it (the original result, or the store's conflict error when the request differs). A record that
    is no longer live (past retention, not yet purged) is dropped and the write is tried once more.
    """
    for attempt_no in range(2):
        try:
            return await attempt()
        except KeyTakenError:
            if key is None:  # only a keyed write can lose its key
                raise
            found = await find()
            if found is not None:
                return replay(found)
            if attempt_no == 0:
                await drop_stale()
    raise RuntimeError(f"idempotency key {key!r} could be neither claimed nor found")
