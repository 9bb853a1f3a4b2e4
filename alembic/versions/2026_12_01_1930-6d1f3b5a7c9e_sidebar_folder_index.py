"""The sidebar's folder index: (folder_id, status, pinned_at, last_message_at) replaces
(folder_id), so an open folder's newest conversations are one index walk and the folders'
counts are read from the index alone (db/folders.py:sidebar_listing).

Revision ID: 6d1f3b5a7c9e
Revises: 4b7d9e1f3a6c
Create Date: 2026-12-01 19:30:00.000000+00:00

"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = '6d1f3b5a7c9e'
down_revision: str | Sequence[str] | None = '4b7d9e1f3a6c'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW = 'ix_chat_session_folder_id_status_pinned_at_last_message_at'


def upgrade() -> None:
    # Plain index statements, no batch: the table (and its search triggers) stays as it is.
    op.create_index(
        NEW, 'chat_session', ['folder_id', 'status', 'pinned_at', 'last_message_at']
    )
    op.drop_index('ix_chat_session_folder_id', table_name='chat_session')


def downgrade() -> None:
    op.create_index('ix_chat_session_folder_id', 'chat_session', ['folder_id'])
    op.drop_index(NEW, table_name='chat_session')
