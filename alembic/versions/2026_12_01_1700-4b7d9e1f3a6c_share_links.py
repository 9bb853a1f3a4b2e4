"""Add share_link: read-only links to a snapshot of a conversation (only token hashes).

Revision ID: 4b7d9e1f3a6c
Revises: 38efa416bde2
Create Date: 2026-12-01 17:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel.sql.sqltypes.AutoString)
from alembic import op


# revision identifiers, used by Alembic.
revision: str = '4b7d9e1f3a6c'
down_revision: str | Sequence[str] | None = '38efa416bde2'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'share_link',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('session_id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('prefix', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('title', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('snapshot_json', sa.Text(), nullable=False),
        sa.Column('message_count', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=True),
        sa.Column('revoked_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['session_id'], ['chat_session.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash', name='uq_share_link_token_hash'),
    )
    op.create_index(op.f('ix_share_link_session_id'), 'share_link', ['session_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_share_link_session_id'), table_name='share_link')
    op.drop_table('share_link')
