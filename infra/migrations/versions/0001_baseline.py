"""Baseline: the tables of the last release without migrations, exactly as its models declared them.

Databases from that release were made by ``create_all``, and a front created only the tables it used
(``anchorgpu quote`` the two quote tables, the bot all of them), so this revision creates each table only
when it is missing: on such a database it adds what the release would have added and keeps the rest
(with their rows). :mod:`infra.migrate` stamps a database that already has all of them without running it.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _missing(name: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(name)


def _bot_fsm() -> None:
    op.create_table(
        "bot_fsm",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("state", sa.String(255), nullable=True),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def _bot_preferences() -> None:
    op.create_table(
        "bot_preferences",
        sa.Column("scope", sa.String(40), primary_key=True),
        sa.Column("subject_id", sa.BigInteger(), nullable=False),
        sa.Column("lang", sa.String(8), nullable=True),
        sa.Column("answer_length", sa.String(8), nullable=True),
    )


def _conversation_turns() -> None:
    op.create_table(
        "conversation_turns",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True,
                  autoincrement=True),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_conversation_turns_key", "conversation_turns", ["key"])


def _quotes() -> None:
    op.create_table(
        "quotes",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=True),
        sa.Column("request_text", sa.Text(), nullable=False),
        sa.Column("request_json", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("price_list_version", sa.String(64), nullable=False),
        sa.Column("gpu_id", sa.String(64), nullable=False),
        sa.Column("gpu_count", sa.Integer(), nullable=False),
        sa.Column("pricing", sa.String(16), nullable=False),
        sa.Column("billable_hours", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("total", sa.String(32), nullable=False),
        sa.Column("lines_json", sa.Text(), nullable=False),
        sa.Column("payload_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_quotes_owner_created", "quotes", ["owner", "created_at"])


def _quote_idempotency_keys() -> None:
    op.create_table(
        "quote_idempotency_keys",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("quote_id", sa.String(32), sa.ForeignKey("quotes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_quote_idempotency_keys_expires_at", "quote_idempotency_keys", ["expires_at"])


def _telegram_updates() -> None:
    op.create_table(
        "telegram_updates",
        sa.Column("update_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(32), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_telegram_updates_claimed_at", "telegram_updates", ["claimed_at"])


# in dependency order: quote_idempotency_keys refers to quotes
TABLES: dict[str, Callable[[], None]] = {
    "bot_fsm": _bot_fsm,
    "bot_preferences": _bot_preferences,
    "conversation_turns": _conversation_turns,
    "quotes": _quotes,
    "quote_idempotency_keys": _quote_idempotency_keys,
    "telegram_updates": _telegram_updates,
}


def upgrade() -> None:
    for name, create in TABLES.items():
        if _missing(name):
            create()


def downgrade() -> None:
    for name in reversed(TABLES):
        op.drop_table(name)
