"""Attachments: `attachment` (one per owner and sha256, its sniffed media type
and where its bytes are), `attachment_chunk` (the bytes kept in the database, 1 MiB a row)
and `message_attachment` (which messages use which attachment). New tables only: nothing
existing changes, so the search triggers stay.

Revision ID: 845e3d173d88
Revises: a140ebfbd831
Create Date: 2026-12-05 14:30:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "845e3d173d88"
down_revision: str | Sequence[str] | None = "a140ebfbd831"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _key() -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=64)


def upgrade() -> None:
    op.create_table(
        "attachment_chunk",
        sa.Column("storage_key", _key(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("storage_key", "seq"),
    )
    op.create_table(
        "attachment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("sha256", _key(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("media_type", sqlmodel.sql.sqltypes.AutoString(length=127), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("storage_key", _key(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["app_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("owner_id", "sha256", name="uq_attachment_owner_id_sha256"),
        sa.UniqueConstraint("storage_key", name="uq_attachment_storage_key"),
    )
    op.create_index("ix_attachment_created_at", "attachment", ["created_at"])
    op.create_table(
        "message_attachment",
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("attachment_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["attachment_id"], ["attachment.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["message_id"], ["chat_message.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("message_id", "attachment_id"),
    )
    op.create_index(
        "ix_message_attachment_attachment_id", "message_attachment", ["attachment_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_message_attachment_attachment_id", table_name="message_attachment")
    op.drop_table("message_attachment")
    op.drop_index("ix_attachment_created_at", table_name="attachment")
    op.drop_table("attachment")
    op.drop_table("attachment_chunk")
