"""A fresh migrated database per test: SQLite in tmp_path, or AGENT_CHAT_TEST_DB_URL if set.

The schema is always built through `migrate()`, so every test also exercises the migration.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session, SQLModel

import agent_chat.db.models  # noqa: F401  (registers the tables)
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.models import ChatSession
from agent_chat.db.sessions import create_session

TEST_DB_URL_ENV = "AGENT_CHAT_TEST_DB_URL"


def _empty_database(url: str) -> None:
    """Drop our tables and alembic's bookkeeping from a shared (e.g. PostgreSQL) database."""
    engine = make_engine(url)
    try:
        SQLModel.metadata.drop_all(engine)
        with engine.begin() as connection:
            connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    finally:
        engine.dispose()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """The URL of an empty database (not yet migrated)."""
    url = os.environ.get(TEST_DB_URL_ENV)
    if url:
        _empty_database(url)
        return url
    return f"sqlite:///{tmp_path / 'db' / 'agent_chat.db'}"


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
