"""A fresh migrated database per test: SQLite in tmp_path, or a new PostgreSQL database when
AGENT_CHAT_TEST_DB_URL is set (see tests/databases.py).

The schema is always built through `migrate()`, so every test also exercises the migration.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

import agent_chat.db.models  # noqa: F401  (registers the tables)
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.models import ChatSession
from agent_chat.db.sessions import create_session
from tests.databases import fresh_database


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database (not yet migrated)."""
    with fresh_database(tmp_path / "db" / "agent_chat.db") as url:
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    migrate(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A unit of work, committed at the end of the test like the app's `open_session`."""
    with open_session(engine) as session:
        yield session


@pytest.fixture
def chat(session: Session) -> ChatSession:
    return create_session(session=session, title="Test chat")
