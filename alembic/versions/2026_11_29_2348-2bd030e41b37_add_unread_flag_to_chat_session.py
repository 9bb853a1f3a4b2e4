"""Add the unread flag to chat_session (a run finished while nobody was looking).

Revision ID: 2bd030e41b37
Revises: de57996a6f78
Create Date: 2026-11-29 23:48:48.080185+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel.sql.sqltypes.AutoString)
from alembic import op


# revision identifiers, used by Alembic.
revision: str = '2bd030e41b37'
down_revision: str | Sequence[str] | None = 'de57996a6f78'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('chat_session', schema=None) as batch_op:
        batch_op.add_column(sa.Column('unread', sa.Boolean(), server_default=sa.false(), nullable=False))



def downgrade() -> None:
    with op.batch_alter_table('chat_session', schema=None) as batch_op:
        batch_op.drop_column('unread')

