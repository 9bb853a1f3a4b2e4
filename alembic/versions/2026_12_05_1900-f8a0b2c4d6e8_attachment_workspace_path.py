"""A message's file remembers where its Workspace run saved it:
`message_attachment.workspace_path` ("attachments/data (2).csv"), so later turns' history
names the path. A plain added column, NULL for links made before (their notes name no path).

Revision ID: f8a0b2c4d6e8
Revises: e6a8c0d2f4b7
Create Date: 2026-12-05 19:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "f8a0b2c4d6e8"
down_revision: str | Sequence[str] | None = "e6a8c0d2f4b7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "message_attachment",
        sa.Column("workspace_path", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
    )


def downgrade() -> None:
    with op.batch_alter_table("message_attachment", schema=None) as batch_op:
        batch_op.drop_column("workspace_path")
