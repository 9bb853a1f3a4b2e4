"""An attachment is one per owner, bytes and name (`uq_attachment_owner_sha256_name`), no
longer per owner and bytes: the same bytes uploaded under another name are a row of their
own, so a message shows, and the agent is told, the name the person attached, not the name
of an earlier upload of the same content. Existing rows all differ already (the old
constraint was stricter). Downgrading refuses while a person has the same bytes under two
names: the old constraint allows one row, and dropping the other would lose a message's file.

Revision ID: d5f7a9b1c3e5
Revises: c4e6a8b0d2f4
Create Date: 2026-12-05 16:30:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "d5f7a9b1c3e5"
down_revision: str | Sequence[str] | None = "c4e6a8b0d2f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attachment", schema=None) as batch_op:
        batch_op.drop_constraint("uq_attachment_owner_id_sha256", type_="unique")
        batch_op.create_unique_constraint(
            "uq_attachment_owner_sha256_name", ["owner_id", "sha256", "name"]
        )


def downgrade() -> None:
    shared = op.get_bind().execute(
        sa.text(
            "SELECT count(*) FROM (SELECT owner_id, sha256 FROM attachment"
            " GROUP BY owner_id, sha256 HAVING count(*) > 1) AS pairs"
        )
    )
    if shared.scalar_one():
        raise RuntimeError(
            "Some people have the same file under several names: the older schema keeps one"
            " row per file, and dropping the others would lose messages' files."
        )
    with op.batch_alter_table("attachment", schema=None) as batch_op:
        batch_op.drop_constraint("uq_attachment_owner_sha256_name", type_="unique")
        batch_op.create_unique_constraint("uq_attachment_owner_id_sha256", ["owner_id", "sha256"])
