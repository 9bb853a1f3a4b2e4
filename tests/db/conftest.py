"""A unit of work and a conversation on the test's fresh database (`engine`, in
tests/conftest.py: SQLite, or a new PostgreSQL database when AGENT_CHAT_TEST_DB_URL is set)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from agent_chat.db.engine import open_session
from agent_chat.db.models import ChatSession
from agent_chat.db.sessions import create_session


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A unit of work, committed at the end of the test like the app's `open_session`."""
    with open_session(engine) as session:
        yield session


@pytest.fixture
def chat(session: Session, user: int) -> ChatSession:
    """A conversation of `user`."""
    return create_session(session=session, user_id=user, title="Test chat")
