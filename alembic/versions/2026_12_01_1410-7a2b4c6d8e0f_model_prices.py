"""Optional prices per model (USD per million input / output tokens).

Revision ID: 7a2b4c6d8e0f
Revises: 5e8f1a2b3c4d
Create Date: 2026-12-01 14:10:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "7a2b4c6d8e0f"
down_revision: str | Sequence[str] | None = "5e8f1a2b3c4d"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("model_config", schema=None) as batch_op:
        batch_op.add_column(sa.Column("price_input", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("price_output", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("model_config", schema=None) as batch_op:
        batch_op.drop_column("price_output")
        batch_op.drop_column("price_input")
