"""update journal (polling without loss)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 12:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | Sequence[str] | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('telegram_update_journal',
    sa.Column('update_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('update_id')
    )
    with op.batch_alter_table('telegram_update_journal', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_telegram_update_journal_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_telegram_update_journal_updated_at'), ['updated_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('telegram_update_journal', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_telegram_update_journal_updated_at'))
        batch_op.drop_index(batch_op.f('ix_telegram_update_journal_status'))

    op.drop_table('telegram_update_journal')
