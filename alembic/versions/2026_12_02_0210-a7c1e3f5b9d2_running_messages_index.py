"""A partial index on chat_message for the RUNNING answers: the takeover watch reads them
every second on every worker (runs/takeover.py), which was a scan of the whole table.

Revision ID: a7c1e3f5b9d2
Revises: 8b4c2d6e9f10
Create Date: 2026-12-02 02:10:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "a7c1e3f5b9d2"
down_revision: str | Sequence[str] | None = "8b4c2d6e9f10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHERE = sa.text("status = 'RUNNING'")


def upgrade() -> None:
    # A plain index statement, no batch: the table (and its search triggers) stays as it is.
    op.create_index(
        "ix_chat_message_running",
        "chat_message",
        ["id"],
        sqlite_where=WHERE,
        postgresql_where=WHERE,
    )


def downgrade() -> None:
    op.drop_index("ix_chat_message_running", table_name="chat_message")
