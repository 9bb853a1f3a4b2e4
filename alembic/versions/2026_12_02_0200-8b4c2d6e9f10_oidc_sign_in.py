"""Single sign-on: oidc_identity ((issuer, subject) -> user), oidc_attempt (a sign-in at the
provider: state, nonce, PKCE verifier) and app_user.password_hash nullable (a user made by
single sign-on has no password).

Revision ID: 8b4c2d6e9f10
Revises: 7f3a9c1e5b2d
Create Date: 2026-12-02 02:00:00.000000+00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel  # noqa: F401  (autogenerate renders sqlmodel.sql.sqltypes.AutoString)
from alembic import op


# revision identifiers, used by Alembic.
revision: str = '8b4c2d6e9f10'
down_revision: str | Sequence[str] | None = '7f3a9c1e5b2d'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'oidc_identity',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('issuer', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('subject', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('last_login_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['app_user.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('issuer', 'subject', name='uq_oidc_identity_issuer_subject'),
    )
    op.create_index(op.f('ix_oidc_identity_user_id'), 'oidc_identity', ['user_id'], unique=False)
    op.create_table(
        'oidc_attempt',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('state', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('nonce', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('code_verifier', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('redirect_uri', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('next_path', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash', name='uq_oidc_attempt_token_hash'),
    )
    op.create_index(
        op.f('ix_oidc_attempt_created_at'), 'oidc_attempt', ['created_at'], unique=False
    )
    with op.batch_alter_table('app_user') as batch_op:
        batch_op.alter_column(
            'password_hash', existing_type=sqlmodel.sql.sqltypes.AutoString(), nullable=True
        )


def downgrade() -> None:
    # A user made by single sign-on keeps no password: an empty hash, which never matches.
    op.execute("UPDATE app_user SET password_hash = '' WHERE password_hash IS NULL")
    with op.batch_alter_table('app_user') as batch_op:
        batch_op.alter_column(
            'password_hash', existing_type=sqlmodel.sql.sqltypes.AutoString(), nullable=False
        )
    op.drop_index(op.f('ix_oidc_attempt_created_at'), table_name='oidc_attempt')
    op.drop_table('oidc_attempt')
    op.drop_index(op.f('ix_oidc_identity_user_id'), table_name='oidc_identity')
    op.drop_table('oidc_identity')
