"""Messages queued while a run works.

Revision ID: 9c3d5e7f1a2b
Revises: 7a2b4c6d8e0f
Create Date: 2026-12-01 14:20:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "9c3d5e7f1a2b"
down_revision: str | Sequence[str] | None = "7a2b4c6d8e0f"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "queued_message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=True),
        sa.Column("skill_folder", sa.String(), nullable=True),
        sa.Column("tool_profile", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["chat_session.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_queued_message_session_id", "queued_message", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_queued_message_session_id", table_name="queued_message")
    op.drop_table("queued_message")
