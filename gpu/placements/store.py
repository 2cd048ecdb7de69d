"""Stored placements, their audit trail and their idempotency keys (SQLite file or PostgreSQL).

Idempotency follows the IETF Idempotency-Key draft, like :mod:`gpu.quote.store`:

* a key is scoped to its owner (``tg:<user>``, ``tg-chat:<chat>``, ``cli:<login>``…);
* it is stored with the operation, the fingerprint of its parameters and a snapshot of the result;
* same key + same operation + same parameters -> the original result again, flagged ``replayed``;
* same key + another operation or other parameters -> :class:`PlacementConflictError`, nothing written;
* concurrent requests with one key -> exactly one change: the key row's primary key (owner, key) is a
  UNIQUE constraint claimed with ``INSERT … ON CONFLICT DO NOTHING`` inside the very transaction that makes
  the change; a loser's transaction is rolled back whole and it reads the winner's record (no Python lock:
  it holds across processes and replicas);
* keys are kept at least ``retention_hours`` (>= 24 h).

The key machinery (claiming, lookup, expiry, the retry when a key is taken) is :mod:`infra.idempotency`,
shared with :mod:`gpu.quote.store`.

Every state change is one transaction: the placement row (guarded by its ``version``), the idempotency
record and the audit event commit together or not at all.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Connection,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from gpu.placements.engine import Placement, placement_from_payload, placement_to_payload
from infra.db import Base, run_in_transaction
from infra.idempotency import MIN_RETENTION_HOURS, IdempotencyKeys, KeyTakenError

__all__ = ["MIN_RETENTION_HOURS", "Change", "KeyRecord", "KeyTakenError", "PlacementNotFoundError",
           "PlacementStore", "from_snapshot", "new_placement_id", "snapshot"]
MAX_VERSION_RETRIES = 8


class PlacementRow(Base):
    __tablename__ = "placements"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128))
    state: Mapped[str] = mapped_column(String(16))  # running | stopped (expired is computed from the clock)
    gpu_id: Mapped[str] = mapped_column(String(64))
    gpu_name: Mapped[str] = mapped_column(String(128))
    gpu_count: Mapped[int] = mapped_column(Integer)
    pricing: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(3))
    minor_units: Mapped[int] = mapped_column(Integer)
    hourly_rate: Mapped[str] = mapped_column(String(32))  # exact decimal strings: SQLite has no exact numeric
    prepaid: Mapped[str] = mapped_column(String(32))
    billed_hours: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    running_since: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    paid_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    quote_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    price_list_version: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_placements_owner_created", "owner", "created_at"),)


class PlacementEventRow(Base):
    """The audit trail: who did what to which placement, when (one row per state change)."""

    __tablename__ = "placement_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    placement_id: Mapped[str] = mapped_column(String(32), ForeignKey("placements.id", ondelete="CASCADE"))
    actor: Mapped[str] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(16))  # rent | stop | start | extend
    idempotency_key: Mapped[str | None] = mapped_column(String(128), nullable=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    details_json: Mapped[str] = mapped_column(Text)

    __table_args__ = (Index("ix_placement_events_placement", "placement_id", "id"),)


class PlacementKeyRow(Base):
    __tablename__ = "placement_idempotency_keys"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    operation: Mapped[str] = mapped_column(String(16))
    fingerprint: Mapped[str] = mapped_column(String(64))
    placement_id: Mapped[str] = mapped_column(String(32), ForeignKey("placements.id", ondelete="CASCADE"))
    response_json: Mapped[str] = mapped_column(Text)  # the result as first returned (replayed verbatim)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    # epoch seconds: compares the same way on every backend (SQLite stores datetimes as text)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)


PLACEMENTS = cast(Table, PlacementRow.__table__)
EVENTS = cast(Table, PlacementEventRow.__table__)
KEYS = cast(Table, PlacementKeyRow.__table__)
TABLES = [PLACEMENTS, EVENTS, KEYS]


class PlacementNotFoundError(LookupError):
    """No such placement for this owner: another owner's placement reads exactly like a wrong id."""

    def __init__(self, placement_id: str) -> None:
        what = "quote" if placement_id.startswith("Q-") else "placement"  # rent --quote: the quote is missing
        super().__init__(f"No {what} {placement_id} found.")
        self.placement_id = placement_id


@dataclass(frozen=True)
class KeyRecord:
    operation: str
    fingerprint: str
    placement_id: str
    response: dict[str, Any]


@dataclass(frozen=True)
class Change:
    """What one state change writes: the new placement (None: nothing to change) and its audit details."""

    placement: Placement | None
    details: dict[str, Any]


def new_placement_id() -> str:
    return "P-" + base64.b32encode(secrets.token_bytes(10)).decode()


def utc(moment: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands datetimes back without a zone; every stored moment is UTC."""
    if moment is None:
        return None
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def _row_of(placement: Placement) -> dict[str, Any]:
    return dict(
        id=placement.id, owner=placement.owner, state=placement.state, gpu_id=placement.gpu_id,
        gpu_name=placement.gpu_name, gpu_count=placement.gpu_count, pricing=placement.pricing,
        currency=placement.currency, minor_units=placement.minor_units,
        hourly_rate=format(placement.hourly_rate, "f"), prepaid=format(placement.prepaid, "f"),
        billed_hours=placement.billed_hours, started_at=placement.started_at,
        running_since=placement.running_since, paid_until=placement.paid_until, quote_id=placement.quote_id,
        price_list_version=placement.price_list_version, version=placement.version,
        created_at=placement.created_at, updated_at=placement.updated_at)


def _placement_of(row: Any) -> Placement:
    m = row._mapping
    started, created, updated = utc(m["started_at"]), utc(m["created_at"]), utc(m["updated_at"])
    assert started is not None and created is not None and updated is not None
    return Placement(
        id=m["id"], owner=m["owner"], state=m["state"], gpu_id=m["gpu_id"], gpu_name=m["gpu_name"],
        gpu_count=int(m["gpu_count"]), pricing=m["pricing"], currency=m["currency"],
        minor_units=int(m["minor_units"]), hourly_rate=Decimal(m["hourly_rate"]), prepaid=Decimal(m["prepaid"]),
        billed_hours=int(m["billed_hours"]), started_at=started, running_since=utc(m["running_since"]),
        paid_until=utc(m["paid_until"]), quote_id=m["quote_id"], price_list_version=m["price_list_version"],
        version=int(m["version"]), created_at=created, updated_at=updated)


def snapshot(placement: Placement, now: dt.datetime, **extra: Any) -> dict[str, Any]:
    """What a key replays: the placement as it was returned, the moment it was returned, and extras."""
    return {"placement": placement_to_payload(placement), "as_of": now.isoformat(), **extra}


def from_snapshot(response: dict[str, Any]) -> tuple[Placement, dt.datetime]:
    return placement_from_payload(response["placement"]), dt.datetime.fromisoformat(response["as_of"])


class PlacementStore:
    def __init__(self, engine: AsyncEngine, retention_hours: int = MIN_RETENTION_HOURS) -> None:
        self.keys = IdempotencyKeys(engine, KEYS, retention_hours=retention_hours, returning="placement_id")
        self.engine = engine
        self.retention = self.keys.retention
        self._lock_rows = engine.dialect.name == "postgresql"

    # ---- writing -------------------------------------------------------------------------------------
    def _key_row(self, owner: str, key: str, operation: str, fingerprint: str, placement_id: str,
                 response: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
        return self.keys.row(owner, key, fingerprint, now, operation=operation, placement_id=placement_id,
                             response_json=json.dumps(response, ensure_ascii=False), created_at=now)

    def _claim(self, conn: Connection, key_row: dict[str, Any] | None) -> None:
        if key_row is not None:
            self.keys.claim(conn, key_row)  # KeyTakenError rolls the whole transaction back

    @staticmethod
    def _event(conn: Connection, placement_id: str, actor: str, action: str, key: str | None,
               now: dt.datetime, details: dict[str, Any]) -> None:
        conn.execute(insert(EVENTS), dict(placement_id=placement_id, actor=actor, action=action,
                                          idempotency_key=key, at=now,
                                          details_json=json.dumps(details, ensure_ascii=False, default=str)))

    async def insert(self, placement: Placement, *, actor: str, key: str | None, operation: str,
                     fingerprint: str, response: dict[str, Any], details: dict[str, Any]) -> None:
        """Store a new placement with its key and its first audit event; :class:`KeyTakenError` if the key
        is already held (then nothing was written)."""
        now = placement.created_at
        key_row = None if key is None else self._key_row(placement.owner, key, operation, fingerprint,
                                                          placement.id, response, now)

        def work(conn: Connection) -> None:
            conn.execute(insert(PLACEMENTS), _row_of(placement))
            self._claim(conn, key_row)
            self._event(conn, placement.id, actor, operation, key, now, details)

        await run_in_transaction(self.engine, work)

    async def change(self, placement_id: str, owner: str, *, actor: str, key: str | None, operation: str,
                     fingerprint: str, now: dt.datetime, decide: Callable[[Placement], Change],
                     respond: Callable[[Placement, Change], dict[str, Any]]) -> tuple[Placement, Change]:
        """Read, decide, write: one transaction with the idempotency record and the audit event.

        ``decide`` is pure (it may run again when a concurrent change won the row's version); it raises to
        refuse. Raises :class:`PlacementNotFoundError` for a wrong id or another owner's placement and
        :class:`KeyTakenError` when the key was claimed meanwhile.
        """
        query = select(PLACEMENTS).where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.owner == owner)
        if self._lock_rows:
            query = query.with_for_update()

        def work(conn: Connection) -> tuple[Placement, Change] | None:
            row = conn.execute(query).first()
            if row is None:
                raise PlacementNotFoundError(placement_id)
            current = _placement_of(row)
            change = decide(current)
            result = change.placement or current
            if change.placement is not None:
                updated = conn.execute(
                    update(PLACEMENTS)
                    .where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.version == current.version)
                    .values(**{k: v for k, v in _row_of(change.placement).items() if k not in {"id", "owner"}}))
                if updated.rowcount != 1:
                    return None  # another change won this version: decide again on the new row
            if key is not None:
                self._claim(conn, self._key_row(owner, key, operation, fingerprint, placement_id,
                                                respond(result, change), now))
            if change.placement is not None:
                self._event(conn, placement_id, actor, operation, key, now, change.details)
            return result, change

        for _ in range(MAX_VERSION_RETRIES):
            outcome = await run_in_transaction(self.engine, work)
            if outcome is not None:
                return outcome
        raise RuntimeError(f"placement {placement_id} kept changing under {operation}; try again")

    # ---- reading -------------------------------------------------------------------------------------
    async def find_key(self, owner: str, key: str, now: dt.datetime) -> KeyRecord | None:
        query = (select(KEYS.c.operation, KEYS.c.fingerprint, KEYS.c.placement_id, KEYS.c.response_json)
                 .where(self.keys.live(owner, key, now)))
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return KeyRecord(row[0], row[1], row[2], json.loads(row[3]))

    async def drop_stale_key(self, owner: str, key: str, now: dt.datetime) -> None:
        await self.keys.drop_stale(owner, key, now)

    async def get(self, placement_id: str, owner: str) -> Placement | None:
        query = select(PLACEMENTS).where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.owner == owner)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else _placement_of(row)

    async def owned(self, owner: str, limit: int = 50) -> list[Placement]:
        query = (select(PLACEMENTS).where(PLACEMENTS.c.owner == owner)
                 .order_by(PLACEMENTS.c.created_at.desc(), PLACEMENTS.c.id.desc()).limit(limit))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_placement_of(row) for row in rows]

    async def events(self, placement_id: str) -> list[dict[str, Any]]:
        query = select(EVENTS).where(EVENTS.c.placement_id == placement_id).order_by(EVENTS.c.id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [{"actor": r.actor, "action": r.action, "idempotency_key": r.idempotency_key, "at": utc(r.at),
                 "details": json.loads(r.details_json)} for r in rows]

    async def count(self, owner: str | None = None) -> int:
        query = select(func.count()).select_from(PLACEMENTS)
        if owner is not None:
            query = query.where(PLACEMENTS.c.owner == owner)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def purge_expired_keys(self, now: dt.datetime) -> int:
        return await self.keys.purge_expired(now)
