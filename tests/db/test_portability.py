"""What differs between SQLite and PostgreSQL, and how the store evens it out
(`./test.sh` runs every db test on both)."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session

from agent_chat.config import normalize_db_url
from agent_chat.db.engine import NUL_REPLACEMENT, make_engine, migrate, open_session
from agent_chat.db.logs import LogRow, append_logs, list_logs
from agent_chat.db.messages import append_message
from agent_chat.db.models import ChatMessage, ChatSession
from agent_chat.db.sessions import create_session

TRICKY = "emoji 🦊, right-to-left שלום עולם, controls \x01\x07\x1b[31m\u200f\ufeff, tab\tend"


def _is_postgresql(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def test_text_with_control_characters_rtl_and_emoji_is_kept_exactly(
    engine: Engine, session: Session, chat: ChatSession
) -> None:
    message = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=None,
        role="USER",
        content=TRICKY,
        status="SENT",
    )
    session.commit()
    with open_session(engine) as fresh:
        assert fresh.get(ChatMessage, message.id).content == TRICKY


def test_nul_is_kept_by_sqlite_and_replaced_on_postgresql(engine: Engine, user: int) -> None:
    """PostgreSQL text cannot hold NUL: without the replacement the whole write would fail,
    and a run whose tool read a binary file could never store its events."""
    text = "before\x00after"
    with open_session(engine) as session:
        chat = create_session(user_id=user, session=session, title="a\x00b")
        message = append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=None,
            role="ASSISTANT",
            content=text,
            status="SUCCESS",
        )
        append_logs(
            session=session,
            message_id=message.id,
            rows=[
                LogRow(seq=1, kind="text", content=text),
                LogRow(
                    seq=2, kind="tool", tool_name="read\x00file", meta_json=json.dumps({"x": text})
                ),
            ],
        )

    def stored(value: str) -> str:
        return value.replace("\x00", NUL_REPLACEMENT) if _is_postgresql(engine) else value

    with open_session(engine) as session:
        assert session.get(ChatMessage, message.id).content == stored(text)
        assert session.get(ChatSession, chat.id).title == stored("a\x00b")
        rows = list_logs(session=session, message_id=message.id)
    assert (rows[0].content, rows[1].tool_name) == (stored(text), stored("read\x00file"))
    # JSON escapes NUL as \u0000, which both databases store as it is.
    assert json.loads(rows[1].meta_json) == {"x": text}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@db:5432/chat", "postgresql+psycopg://u:p@db:5432/chat"),
        ("postgres://u@db/chat?sslmode=require", "postgresql+psycopg://u@db/chat?sslmode=require"),
        ("postgresql+psycopg://u@db/chat", "postgresql+psycopg://u@db/chat"),
        ("postgresql+psycopg2://u@db/chat", "postgresql+psycopg2://u@db/chat"),
        ("sqlite:///data/agent_chat.db", "sqlite:///data/agent_chat.db"),
    ],
)
def test_plain_postgresql_urls_use_psycopg_3(url: str, expected: str) -> None:
    assert normalize_db_url(url) == expected


def test_make_engine_and_migrate_accept_a_plain_postgresql_url(empty_db_url: str) -> None:
    if not empty_db_url.startswith("postgresql+psycopg://"):
        pytest.skip("needs PostgreSQL (AGENT_CHAT_TEST_DB_URL)")
    plain = empty_db_url.replace("postgresql+psycopg://", "postgresql://", 1)
    migrate(plain)
    engine = make_engine(plain)
    try:
        assert engine.dialect.driver == "psycopg"
        assert "chat_session" in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()
