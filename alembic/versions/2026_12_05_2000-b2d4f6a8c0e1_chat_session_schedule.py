"""A conversation remembers the schedule that made it or adds to it:
`chat_session.schedule_id` (SET NULL when the schedule is deleted), so the sidebar marks it.

PostgreSQL: a plain added column, its key and an index. SQLite can add the column with its
key only in the column's own clause (`ADD COLUMN … REFERENCES … ON DELETE SET NULL`), whose
ON DELETE SQLAlchemy's reflection does not read, so models and migrations would disagree:
there the table is recreated with the key as a table constraint (as every other key of
chat_session), and the search triggers, which go with the old table, are made again.

Revision ID: b2d4f6a8c0e1
Revises: a1c3e5f7b9d2
Create Date: 2026-12-05 20:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = "b2d4f6a8c0e1"
down_revision: str | Sequence[str] | None = "a1c3e5f7b9d2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = "fk_chat_session_schedule_id"
INDEX = "ix_chat_session_schedule_id"


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    column = sa.Column("schedule_id", sa.Integer(), nullable=True)
    if op.get_bind().dialect.name != "sqlite":
        op.add_column("chat_session", column)
        op.create_foreign_key(
            KEY, "chat_session", "schedule", ["schedule_id"], ["id"], ondelete="SET NULL"
        )
        op.create_index(INDEX, "chat_session", ["schedule_id"], unique=False)
        return
    with op.batch_alter_table("chat_session", recreate="always") as batch:
        batch.add_column(column)
        batch.create_foreign_key(KEY, "schedule", ["schedule_id"], ["id"], ondelete="SET NULL")
        batch.create_index(INDEX, ["schedule_id"], unique=False)
    search_schema.create_sqlite_triggers(_execute)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_index(INDEX, table_name="chat_session")
        op.drop_column("chat_session", "schedule_id")  # its key goes with it
        return
    with op.batch_alter_table("chat_session", recreate="always") as batch:
        batch.drop_index(INDEX)
        batch.drop_constraint(KEY, type_="foreignkey")
        batch.drop_column("schedule_id")
    search_schema.create_sqlite_triggers(_execute)
