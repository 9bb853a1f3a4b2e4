"""PostgreSQL: the messages' GIN index gets a second column, the first 2–6 characters of each
word (`agent_chat_search_prefixes(search_vector)`, an expression: no table rewrite), so a typed
prefix is one exact lookup (db/search_schema.py); it replaces the one-column index. SQLite's
FTS5 index is unchanged (its prefix queries were fast already).

Built CONCURRENTLY (outside the migration's transaction: writes go on meanwhile); at 1,000,000
messages the build takes minutes (README, "Search").

Revision ID: 9d5e7f1a3b6c
Revises: b3d5f7a9c1e2
Create Date: 2026-12-02 02:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = "9d5e7f1a3b6c"
down_revision: str | Sequence[str] | None = "b3d5f7a9c1e2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    with op.get_context().autocommit_block():
        # GIN builds much faster with room to sort its entries (the default is 64 MB).
        _execute("SET maintenance_work_mem = '256MB'")
        search_schema.create_postgresql_prefixes(_execute, concurrently=True)
        _execute("RESET maintenance_work_mem")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    with op.get_context().autocommit_block():
        search_schema.drop_postgresql_prefixes(_execute, concurrently=True)
