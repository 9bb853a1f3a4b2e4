"""Add api_token: personal API tokens for the HTTP API (only their hashes are stored).

Revision ID: 3c5e7a9b1d20
Revises: 2bd030e41b37
Create Date: 2026-12-01 13:30:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel.sql.sqltypes.AutoString)
from alembic import op


# revision identifiers, used by Alembic.
revision: str = '3c5e7a9b1d20'
down_revision: str | Sequence[str] | None = '2bd030e41b37'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'api_token',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('token_hash', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('prefix', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('last_used_at', sa.DateTime(), nullable=True),
        sa.Column('revoked_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash', name='uq_api_token_token_hash'),
    )


def downgrade() -> None:
    op.drop_table('api_token')
