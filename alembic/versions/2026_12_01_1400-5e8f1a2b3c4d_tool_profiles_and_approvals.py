"""Tool profiles per conversation and message; approvals recorded as pauses (kind, detail).

Revision ID: 5e8f1a2b3c4d
Revises: 3c5e7a9b1d20
Create Date: 2026-12-01 14:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "5e8f1a2b3c4d"
down_revision: str | Sequence[str] | None = "3c5e7a9b1d20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chat_session", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("tool_profile", sa.String(), server_default="chat", nullable=False)
        )
    with op.batch_alter_table("chat_message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tool_profile", sa.String(), nullable=True))
    with op.batch_alter_table("run_pause", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(), server_default="clarify", nullable=False)
        )
        batch_op.add_column(sa.Column("detail", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_pause", schema=None) as batch_op:
        batch_op.drop_column("detail")
        batch_op.drop_column("kind")
    with op.batch_alter_table("chat_message", schema=None) as batch_op:
        batch_op.drop_column("tool_profile")
    with op.batch_alter_table("chat_session", schema=None) as batch_op:
        batch_op.drop_column("tool_profile")
