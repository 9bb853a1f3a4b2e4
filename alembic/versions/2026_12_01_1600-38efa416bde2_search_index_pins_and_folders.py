"""Full-text search index (SQLite FTS5, PostgreSQL tsvector + GIN), pins and folders.

Revision ID: 38efa416bde2
Revises: 9c3d5e7f1a2b
Create Date: 2026-12-01 16:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = "38efa416bde2"
down_revision: str | Sequence[str] | None = "9c3d5e7f1a2b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    op.create_table(
        "chat_folder",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("collapsed", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    # Before the search triggers: on SQLite this batch recreates chat_session.
    with op.batch_alter_table("chat_session") as batch:
        batch.add_column(sa.Column("pinned_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("folder_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_chat_session_folder_id_chat_folder",
            "chat_folder",
            ["folder_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.create_index("ix_chat_session_folder_id", ["folder_id"])
        batch.create_index("ix_chat_session_pinned_at", ["pinned_at"])
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        # The triggers (and the fill below) call the app's Python function.
        search_schema.register_sqlite_function(bind.connection.driver_connection)
        search_schema.create_sqlite(_execute)
    else:
        search_schema.create_postgresql(_execute)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        search_schema.drop_sqlite(_execute)
    else:
        search_schema.drop_postgresql(_execute)
    with op.batch_alter_table("chat_session") as batch:
        batch.drop_index("ix_chat_session_pinned_at")
        batch.drop_index("ix_chat_session_folder_id")
        batch.drop_constraint("fk_chat_session_folder_id_chat_folder", type_="foreignkey")
        batch.drop_column("folder_id")
        batch.drop_column("pinned_at")
    op.drop_table("chat_folder")
