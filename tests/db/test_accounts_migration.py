"""An install from before accounts (AGENT_CHAT_PASSWORD, conversations, no user) upgraded:
the migration keeps every conversation and the old password signs the administrator in."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from agent_chat.db import users
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.messages import active_branch, append_message
from agent_chat.db.models import MessageRole, MessageStatus, utcnow
from agent_chat.db.sessions import create_session, list_sessions
from tests.support.accounts import use_cheap_hashes
from tests.support.databases import BEFORE_ACCOUNTS, alembic_config


def test_a_password_only_install_keeps_every_conversation(
    empty_db_url: str, monkeypatch: pytest.MonkeyPatch, user: int
) -> None:
    use_cheap_hashes(monkeypatch)
    command.upgrade(alembic_config(empty_db_url), BEFORE_ACCOUNTS)
    engine = make_engine(empty_db_url)
    try:
        assert "app_user" not in sa.inspect(engine).get_table_names()
        with open_session(engine) as session:
            for n in range(3):
                chat = create_session(user_id=user, session=session, title=f"old conversation {n}")
                append_message(
                    session=session,
                    chat_session_id=chat.id,
                    parent_id=None,
                    role=MessageRole.USER,
                    content=f"hi {n}",
                    status=MessageStatus.SENT,
                )
        engine.dispose()
        migrate(empty_db_url)  # what the app does at start
        engine = make_engine(empty_db_url)
        with open_session(engine) as session:
            how = users.ensure_first_admin(
                session=session, admin_user=None, admin_password=None, legacy_password="old pw"
            )
        assert how is not None
        with open_session(engine) as session:
            chats = sorted(
                list_sessions(user_id=user, session=session), key=lambda chat: chat.title
            )
            assert [c.title for c in chats] == [f"old conversation {n}" for n in range(3)]
            for n, chat in enumerate(chats):
                branch = active_branch(session=session, chat_session_id=chat.id)
                assert [m.content for m in branch] == [f"hi {n}"]
            check = users.check_login(
                session=session, username="admin", password="old pw", now=utcnow()
            )
            assert check.user is not None and check.user.role == "admin"
    finally:
        engine.dispose()
