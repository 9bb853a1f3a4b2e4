"""PostgreSQL's message search vector also holds each word's first 1–6 characters (`*cam`),
so a typed prefix is one exact GIN lookup (db/search_schema.py); rebuilt for existing rows.
SQLite's FTS5 index is unchanged (its prefix queries were fast already).

Revision ID: 8e2f4a6c1b3d
Revises: 6d1e8f2a4b7c
Create Date: 2026-12-01 21:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = "8e2f4a6c1b3d"
down_revision: str | Sequence[str] | None = "6d1e8f2a4b7c"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        search_schema.add_postgresql_prefixes(_execute)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        search_schema.drop_postgresql_prefixes(_execute)
