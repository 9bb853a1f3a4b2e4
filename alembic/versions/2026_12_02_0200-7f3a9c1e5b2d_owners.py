"""Every conversation, folder and API token has an owner:
`chat_session.owner_id`, `chat_folder.owner_id`, `api_token.user_id` → `app_user.id`. The
sidebar's indexes lead with the owner; folder names are unique per owner. Rows from before
accounts go to the first administrator when one exists (else `users.create_first_admin`
adopts them).

Revision ID: 7f3a9c1e5b2d
Revises: 6d1e8f2a4b7c
Create Date: 2026-12-02 02:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from agent_chat.db import search_schema

# revision identifiers, used by Alembic.
revision: str = '7f3a9c1e5b2d'
down_revision: str | Sequence[str] | None = '6d1e8f2a4b7c'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FOLDER_INDEX = 'ix_chat_session_folder_id_status_pinned_at_last_message_at'
OWNER_FOLDER_INDEX = 'ix_chat_session_owner_folder_status_pinned_last'
FIRST_ADMIN = "(SELECT MIN(id) FROM app_user WHERE role = 'admin')"


def _execute(statement: str) -> None:
    op.execute(sa.text(statement))


def upgrade() -> None:
    # On SQLite each batch recreates its table (a new foreign key); the search triggers on
    # chat_session go with the old table and are made again below.
    with op.batch_alter_table('chat_session') as batch:
        batch.add_column(sa.Column('owner_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(
            'fk_chat_session_owner_id_app_user', 'app_user', ['owner_id'], ['id'],
            ondelete='CASCADE',
        )
        batch.drop_index('ix_chat_session_status_last_message_at')
        batch.drop_index(FOLDER_INDEX)
        batch.drop_index('ix_chat_session_pinned_at')
        batch.create_index(
            'ix_chat_session_owner_id_status_last_message_at',
            ['owner_id', 'status', 'last_message_at'],
        )
        batch.create_index(
            OWNER_FOLDER_INDEX, ['owner_id', 'folder_id', 'status', 'pinned_at', 'last_message_at']
        )
        batch.create_index('ix_chat_session_owner_id_pinned_at', ['owner_id', 'pinned_at'])
    with op.batch_alter_table('chat_folder') as batch:
        batch.add_column(sa.Column('owner_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(
            'fk_chat_folder_owner_id_app_user', 'app_user', ['owner_id'], ['id'],
            ondelete='CASCADE',
        )
        batch.create_unique_constraint('uq_chat_folder_owner_id_name', ['owner_id', 'name'])
    with op.batch_alter_table('api_token') as batch:
        batch.add_column(sa.Column('user_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(
            'fk_api_token_user_id_app_user', 'app_user', ['user_id'], ['id'], ondelete='CASCADE'
        )
        batch.create_index('ix_api_token_user_id', ['user_id'])
    # What existed before accounts belongs to the first administrator, if there is one yet.
    _execute(f"UPDATE chat_session SET owner_id = {FIRST_ADMIN} WHERE owner_id IS NULL")
    _execute(f"UPDATE chat_folder SET owner_id = {FIRST_ADMIN} WHERE owner_id IS NULL")
    _execute(f"UPDATE api_token SET user_id = {FIRST_ADMIN} WHERE user_id IS NULL")
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        search_schema.register_sqlite_function(bind.connection.driver_connection)
        search_schema.create_sqlite_triggers(_execute)


def downgrade() -> None:
    with op.batch_alter_table('api_token') as batch:
        batch.drop_index('ix_api_token_user_id')
        batch.drop_constraint('fk_api_token_user_id_app_user', type_='foreignkey')
        batch.drop_column('user_id')
    with op.batch_alter_table('chat_folder') as batch:
        batch.drop_constraint('uq_chat_folder_owner_id_name', type_='unique')
        batch.drop_constraint('fk_chat_folder_owner_id_app_user', type_='foreignkey')
        batch.drop_column('owner_id')
    with op.batch_alter_table('chat_session') as batch:
        batch.drop_index('ix_chat_session_owner_id_pinned_at')
        batch.drop_index(OWNER_FOLDER_INDEX)
        batch.drop_index('ix_chat_session_owner_id_status_last_message_at')
        batch.create_index('ix_chat_session_pinned_at', ['pinned_at'])
        batch.create_index(FOLDER_INDEX, ['folder_id', 'status', 'pinned_at', 'last_message_at'])
        batch.create_index(
            'ix_chat_session_status_last_message_at', ['status', 'last_message_at']
        )
        batch.drop_constraint('fk_chat_session_owner_id_app_user', type_='foreignkey')
        batch.drop_column('owner_id')
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        search_schema.register_sqlite_function(bind.connection.driver_connection)
        search_schema.create_sqlite_triggers(_execute)
