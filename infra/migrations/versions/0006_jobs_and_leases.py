"""answer jobs and leases

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 12:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | Sequence[str] | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('leases',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('owner', sa.String(length=64), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_table('answer_jobs',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('chat_id', sa.BigInteger(), nullable=False),
    sa.Column('thread_id', sa.BigInteger(), nullable=True),
    sa.Column('user_id', sa.BigInteger(), nullable=True),
    sa.Column('is_private', sa.Boolean(), nullable=False),
    sa.Column('reply_to_message_id', sa.BigInteger(), nullable=True),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('lang', sa.String(length=8), nullable=False),
    sa.Column('answer_lang', sa.String(length=8), nullable=True),
    sa.Column('placeholder_message_id', sa.BigInteger(), nullable=True),
    sa.Column('owner', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('heartbeat_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('answer_jobs', schema=None) as batch_op:
        batch_op.create_index('ix_answer_jobs_state_heartbeat', ['state', 'heartbeat_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('answer_jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_answer_jobs_state_heartbeat')
    op.drop_table('answer_jobs')
    op.drop_table('leases')
