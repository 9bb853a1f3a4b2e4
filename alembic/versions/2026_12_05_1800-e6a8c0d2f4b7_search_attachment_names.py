"""Search finds a conversation by the names of the files its messages carry: the names of
attachments get their own index (db/search_schema.py), filled from the existing rows here.
SQLite: the FTS5 table `attachment_fts` and its triggers; PostgreSQL: a generated
`attachment.search_vector` with a GIN index (the table holds no bytes: a quick rewrite).

Revision ID: e6a8c0d2f4b7
Revises: d5f7a9b1c3e5
Create Date: 2026-12-05 18:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = "e6a8c0d2f4b7"
down_revision: str | Sequence[str] | None = "d5f7a9b1c3e5"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        search_schema.create_sqlite_attachments(_execute)
    else:
        search_schema.create_postgresql_attachments(_execute)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        search_schema.drop_sqlite_attachments(_execute)
    else:
        search_schema.drop_postgresql_attachments(_execute)
