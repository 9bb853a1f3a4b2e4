"""chat_message.bridge_url: the bridge each run went to (several bridges,
AGENT_CHAT_BRIDGE_URLS); NULL for rows from before, read as the first bridge.

Revision ID: b3d5f7a9c1e2
Revises: a7c1e3f5b9d2
Create Date: 2026-12-02 03:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "b3d5f7a9c1e2"
down_revision: str | Sequence[str] | None = "a7c1e3f5b9d2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN, no batch: the table (and its search triggers) stays as it is.
    op.add_column(
        "chat_message",
        sa.Column("bridge_url", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("chat_message", "bridge_url")
