"""An install from before accounts (AGENT_CHAT_PASSWORD, conversations, no user) upgraded:
the migration keeps every conversation, the old password signs the administrator in, and
every conversation, folder and API token from before is the administrator's (and nobody
else's)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine

from agent_chat.db import api_tokens, folders, users
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.messages import active_branch
from agent_chat.db.models import utcnow
from agent_chat.db.search import search
from agent_chat.db.sessions import list_sessions
from tests.support.accounts import use_cheap_hashes
from tests.support.databases import BEFORE_ACCOUNTS, alembic_config
from tests.support.users import make_user

ACCOUNTS = "6d1e8f2a4b7c"


def _old_rows(engine: Engine) -> None:
    """Three conversations (one question each, "hi n"), a folder and an API token, written
    with plain SQL as the old schema has them (the models have owners now)."""
    now = utcnow()
    with engine.begin() as connection:
        for n in range(3):
            chat_id = connection.execute(
                sa.text(
                    "INSERT INTO chat_session (session_uuid, title, tool_profile, hermes_session,"
                    " status, unread, created_at, last_message_at, updated_at) VALUES (:u, :t,"
                    " 'chat', :h, 'ACTIVE', false, :now, :now, :now) RETURNING id"
                ),
                {"u": f"00000000-0000-4000-8000-00000000000{n}", "t": f"old conversation {n}",
                 "h": f"h{n}", "now": now},
            ).scalar_one()  # fmt: skip
            connection.execute(
                sa.text(
                    "INSERT INTO chat_message (session_id, is_active, branch_order, role,"
                    " content, status, created_at) VALUES (:s, true, 0, 'USER', :c, 'SENT', :now)"
                ),
                {"s": chat_id, "c": f"hi {n}", "now": now},
            )
        connection.execute(
            sa.text("INSERT INTO chat_folder (name, collapsed, created_at) VALUES ('Old', false, :now)"),
            {"now": now},
        )  # fmt: skip
        connection.execute(
            sa.text(
                "INSERT INTO api_token (name, token_hash, prefix, created_at) "
                "VALUES ('old', :h, 'acht_old', :now)"
            ),
            {"h": api_tokens.hash_token("acht_old-token"), "now": now},
        )


def _assert_all_theirs(engine: Engine, admin_id: int) -> None:
    with open_session(engine) as session:
        other = make_user(session, "someone-else")
    with open_session(engine) as session:
        chats = sorted(list_sessions(session=session, user_id=admin_id), key=lambda c: c.title)
        assert [c.title for c in chats] == [f"old conversation {n}" for n in range(3)]
        for n, chat in enumerate(chats):
            branch = active_branch(session=session, chat_session_id=chat.id)
            assert [m.content for m in branch] == [f"hi {n}"]
        # Visible to them everywhere: search (whose triggers the migration made again).
        assert len(search(session=session, user_id=admin_id, query="hi")) == 3
        assert [f.name for f in folders.list_folders(session=session, user_id=admin_id)] == ["Old"]
        assert [t.name for t in api_tokens.list_tokens(session=session, user_id=admin_id)] == [
            "old"
        ]
        assert api_tokens.verify_token(session=session, token="acht_old-token") == admin_id
        # And to nobody else.
        assert list_sessions(session=session, user_id=other) == []
        assert search(session=session, user_id=other, query="hi") == []
        assert folders.list_folders(session=session, user_id=other) == []


def test_a_password_only_install_keeps_every_conversation(
    empty_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_cheap_hashes(monkeypatch)
    command.upgrade(alembic_config(empty_db_url), BEFORE_ACCOUNTS)
    engine = make_engine(empty_db_url)
    try:
        assert "app_user" not in sa.inspect(engine).get_table_names()
        _old_rows(engine)
        engine.dispose()
        migrate(empty_db_url)  # what the app does at start
        engine = make_engine(empty_db_url)
        with open_session(engine) as session:
            how = users.ensure_first_admin(
                session=session, admin_user=None, admin_password=None, legacy_password="old pw"
            )
        assert how is not None
        with open_session(engine) as session:
            check = users.check_login(
                session=session, username="admin", password="old pw", now=utcnow()
            )
            assert check.user is not None and check.user.role == "admin"
            admin_id = check.user.id
        _assert_all_theirs(engine, admin_id)
    finally:
        engine.dispose()


def test_the_migration_gives_ownerless_rows_to_an_existing_administrator(
    empty_db_url: str,
) -> None:
    """Accounts came first (an administrator exists), the conversations have no owner yet:
    the owners' migration gives them to the first administrator."""
    command.upgrade(alembic_config(empty_db_url), ACCOUNTS)
    engine = make_engine(empty_db_url)
    try:
        _old_rows(engine)
        now = utcnow()
        with engine.begin() as connection:
            for name, role in (("member", "member"), ("boss", "admin"), ("boss2", "admin")):
                connection.execute(
                    sa.text(
                        "INSERT INTO app_user (username, display_name, password_hash, role,"
                        " disabled, password_changed_at, created_at) VALUES (:n, :n, 'x', :r,"
                        " false, :now, :now)"
                    ),
                    {"n": name, "r": role, "now": now},
                )  # fmt: skip
            boss = connection.execute(
                sa.text("SELECT id FROM app_user WHERE username = 'boss'")
            ).scalar_one()
        engine.dispose()
        command.upgrade(alembic_config(empty_db_url), "head")  # the owners migration among them
        engine = make_engine(empty_db_url)
        _assert_all_theirs(engine, boss)
    finally:
        engine.dispose()
