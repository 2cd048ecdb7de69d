"""Stored quotes with idempotency keys (SQLAlchemy async; SQLite file by default, PostgreSQL by URL).

Idempotency follows Stripe and the IETF Idempotency-Key draft:

* a key is scoped to its owner (two users may use the same key independently);
* it is stored with the fingerprint of the normalised request and the quote it produced;
* same key + same request -> the original quote, unchanged (same id, same total even after prices
  change), flagged ``replayed``;
* same key + another request -> :class:`IdempotencyConflictError`, nothing is written;
* concurrent requests with one key -> exactly one quote: the key row's primary key (owner, key) is a
  database UNIQUE constraint; the losers' key rows are not inserted (``ON CONFLICT DO NOTHING``), their
  quote rows are removed in the same transaction, and they read the winner's (no Python lock, so it holds
  across processes and replicas);
* quotes issued at the same moment share one transaction (group commit), each still all-or-nothing;
* keys are kept at least ``retention_hours`` (>= 24 h); after that the key may be used again.

The key machinery (claiming, lookup, expiry, the retry when a key is taken) is :mod:`infra.idempotency`,
shared with :mod:`gpu.placements.store`.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

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
    delete,
    func,
    insert,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from gpu.quote.engine import Quote, quote_from_payload, quote_to_payload
from gpu.quote.request import QuoteInputError, QuoteRequest
from infra.batching import MicroBatcher
from infra.db import Base, run_in_transaction
from infra.idempotency import (
    KEY_PATTERN,
    MIN_RETENTION_HOURS,
    IdempotencyKeys,
    KeyTakenError,
    claim_or_replay,
    key_problem,
)

__all__ = ["KEY_PATTERN", "MIN_RETENTION_HOURS", "IdempotencyConflictError", "InvalidIdempotencyKeyError",
           "IssuedQuote", "QuoteStore", "validate_key"]


class QuoteRow(Base):
    __tablename__ = "quotes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128))
    idempotency_key: Mapped[str | None] = mapped_column(String(128), nullable=True)
    request_text: Mapped[str] = mapped_column(Text)
    request_json: Mapped[str] = mapped_column(Text)
    fingerprint: Mapped[str] = mapped_column(String(64))
    price_list_version: Mapped[str] = mapped_column(String(64))
    gpu_id: Mapped[str] = mapped_column(String(64))
    gpu_count: Mapped[int] = mapped_column(Integer)
    pricing: Mapped[str] = mapped_column(String(16))
    billable_hours: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    total: Mapped[str] = mapped_column(String(32))  # exact decimal string; SQLite has no exact numeric
    lines_json: Mapped[str] = mapped_column(Text)
    payload_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_quotes_owner_created", "owner", "created_at"),)


class QuoteKeyRow(Base):
    __tablename__ = "quote_idempotency_keys"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    quote_id: Mapped[str] = mapped_column(String(32), ForeignKey("quotes.id", ondelete="CASCADE"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    # epoch seconds: compares the same way on every backend (SQLite stores datetimes as text)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)


QUOTES = cast(Table, QuoteRow.__table__)
KEYS = cast(Table, QuoteKeyRow.__table__)


class InvalidIdempotencyKeyError(QuoteInputError):
    pass


class IdempotencyConflictError(Exception):
    """The key was already used for a different request; nothing was written."""

    def __init__(self, key: str, original: IssuedQuote) -> None:
        self.key = key
        self.original = original
        quote = original.quote
        super().__init__(
            f"Idempotency key '{key}' was already used for a different request: quote {original.quote_id} "
            f"({quote.gpu_id} x{quote.gpu_count}, {quote.duration.describe('en')}, {quote.pricing}). "
            "Reuse a key only to repeat exactly the same request; use a new key (or none) for a different "
            "purchase or configuration."
        )


@dataclass(frozen=True)
class _NewQuote:
    quote_id: str
    row: dict[str, object]
    key_row: dict[str, object] | None


@dataclass(frozen=True)
class IssuedQuote:
    quote_id: str
    owner: str
    idempotency_key: str | None
    request_text: str
    fingerprint: str
    quote: Quote
    replayed: bool


def validate_key(key: str) -> str:
    problem = key_problem(key)
    if problem is not None:
        raise InvalidIdempotencyKeyError(problem, [], "key", "bad_key")
    return key


def new_quote_id() -> str:
    return "Q-" + base64.b32encode(secrets.token_bytes(10)).decode()


class QuoteStore:
    def __init__(self, engine: AsyncEngine, retention_hours: int = MIN_RETENTION_HOURS) -> None:
        # the UNIQUE (owner, key) primary key decides which concurrent request wins
        self.keys = IdempotencyKeys(engine, KEYS, retention_hours=retention_hours, returning="quote_id")
        self.engine = engine
        self.retention = self.keys.retention
        # group commit: the quotes issued during one turn of the event loop share one transaction
        self._inserts: MicroBatcher[_NewQuote, bool] = MicroBatcher(self._insert_batch)

    # ---- issuing -------------------------------------------------------------------------------------
    async def issue(self, *, owner: str, key: str | None, request: QuoteRequest, request_text: str,
                    make_quote: Callable[[], Quote], now: dt.datetime | None = None) -> IssuedQuote:
        """Price and store, or replay / refuse when the owner already used ``key``.

        ``make_quote`` is pure and cheap (well under a millisecond); its result is discarded on a replay.
        """
        now = now or dt.datetime.now(dt.UTC)
        fingerprint = request.fingerprint()
        if key is not None:
            validate_key(key)
        # Optimistic: a new key is the common case, so insert first and look the key up only when the
        # insert is refused (one round trip fewer). A refused insert rolls back: nothing is written.
        try:
            quote = make_quote()
        except QuoteInputError:
            # the request may be a replay of a quote issued under older prices: the original wins
            found = await self._find_key(owner, key, now) if key is not None else None
            if found is None or key is None:
                raise
            return self._replay_or_refuse(key, fingerprint, found)
        quote_id = new_quote_id()
        payload = quote_to_payload(quote)
        new = self._new_quote(owner, key, request, request_text, fingerprint, quote, quote_id, payload, now)

        async def attempt() -> IssuedQuote:
            if not await self._inserts.submit(new):
                raise KeyTakenError  # another request holds this key: nothing of this quote was kept
            return IssuedQuote(quote_id, owner, key, request_text, fingerprint, quote, replayed=False)

        async def find() -> tuple[str, IssuedQuote] | None:
            assert key is not None  # only a keyed quote can be refused
            return await self._find_key(owner, key, now)

        def replay(found: tuple[str, IssuedQuote]) -> IssuedQuote:
            assert key is not None
            return self._replay_or_refuse(key, fingerprint, found)

        async def drop_stale() -> None:  # the holder's claim has expired: drop it, then try once more
            assert key is not None
            await self.keys.drop_stale(owner, key, now)

        return await claim_or_replay(attempt, key=key, find=find, replay=replay, drop_stale=drop_stale)

    def _new_quote(self, owner: str, key: str | None, request: QuoteRequest, request_text: str,
                   fingerprint: str, quote: Quote, quote_id: str, payload: dict[str, object],
                   now: dt.datetime) -> _NewQuote:
        row = dict(
            id=quote_id, owner=owner, idempotency_key=key, request_text=request_text,
            request_json=json.dumps(request.normalized(), sort_keys=True), fingerprint=fingerprint,
            price_list_version=quote.price_list_version, gpu_id=quote.gpu_id, gpu_count=quote.gpu_count,
            pricing=quote.pricing, billable_hours=quote.billable_hours, currency=quote.currency,
            total=payload["total"], lines_json=json.dumps(payload["lines"], ensure_ascii=False),
            payload_json=json.dumps(payload, ensure_ascii=False), created_at=now)
        key_row = None if key is None else self.keys.row(owner, key, fingerprint, now, quote_id=quote_id,
                                                           created_at=now)
        return _NewQuote(quote_id, row, key_row)

    async def _insert_batch(self, batch: list[_NewQuote]) -> list[bool]:
        """One transaction: every quote row, then their key rows where the key is free, then the quotes
        whose key was taken are removed again. True for a stored quote, False for a taken key."""
        keyed = [(item.quote_id, item.key_row) for item in batch if item.key_row is not None]

        def store(conn: Connection) -> set[str]:
            conn.execute(insert(QUOTES), [item.row for item in batch])
            claimed = self.keys.claim_many(conn, [key_row for _, key_row in keyed])
            refused = [quote_id for quote_id, _ in keyed if quote_id not in claimed]
            if refused:
                conn.execute(delete(QUOTES).where(QUOTES.c.id.in_(refused)))
            return claimed

        claimed = await run_in_transaction(self.engine, store)
        return [item.key_row is None or item.quote_id in claimed for item in batch]

    def _replay_or_refuse(self, key: str, fingerprint: str, found: tuple[str, IssuedQuote]) -> IssuedQuote:
        stored_fingerprint, original = found
        if stored_fingerprint != fingerprint:
            raise IdempotencyConflictError(key, original)
        return IssuedQuote(original.quote_id, original.owner, original.idempotency_key, original.request_text,
                           original.fingerprint, original.quote, replayed=True)

    async def _find_key(self, owner: str, key: str, now: dt.datetime) -> tuple[str, IssuedQuote] | None:
        query = (select(KEYS.c.fingerprint, QUOTES)
                 .join(QUOTES, QUOTES.c.id == KEYS.c.quote_id)
                 .where(self.keys.live(owner, key, now)))
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return row[0], self._issued(row._mapping)

    @staticmethod
    def _issued(row: object) -> IssuedQuote:
        mapping = dict(row)  # type: ignore[call-overload]
        quote = quote_from_payload(json.loads(mapping["payload_json"]))
        return IssuedQuote(mapping["id"], mapping["owner"], mapping["idempotency_key"], mapping["request_text"],
                           mapping["fingerprint"], quote, replayed=False)

    # ---- reading -------------------------------------------------------------------------------------
    async def get(self, quote_id: str) -> IssuedQuote | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(QUOTES).where(QUOTES.c.id == quote_id))).first()
        return None if row is None else self._issued(row._mapping)

    async def recent(self, owner: str, limit: int = 10) -> list[IssuedQuote]:
        query = (select(QUOTES).where(QUOTES.c.owner == owner)
                 .order_by(QUOTES.c.created_at.desc(), QUOTES.c.id.desc()).limit(limit))
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [self._issued(row._mapping) for row in rows]

    async def count(self, owner: str | None = None) -> int:
        query = select(func.count()).select_from(QUOTES)
        if owner is not None:
            query = query.where(QUOTES.c.owner == owner)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def purge_expired_keys(self, now: dt.datetime | None = None) -> int:
        """Forget keys past retention (their quotes stay); returns how many were removed."""
        return await self.keys.purge_expired(now or dt.datetime.now(dt.UTC))
