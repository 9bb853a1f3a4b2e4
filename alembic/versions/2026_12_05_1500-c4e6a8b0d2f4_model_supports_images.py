"""A model says whether it reads images: `model_config.supports_images`, false
for every model until someone marks it. A plain added column (model_config has no search
triggers).

Revision ID: c4e6a8b0d2f4
Revises: 845e3d173d88
Create Date: 2026-12-05 15:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "c4e6a8b0d2f4"
down_revision: str | Sequence[str] | None = "845e3d173d88"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "model_config",
        sa.Column("supports_images", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("model_config", schema=None) as batch_op:
        batch_op.drop_column("supports_images")
