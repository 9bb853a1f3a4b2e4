"""A fresh migrated database per export test (SQLite, or PostgreSQL with
AGENT_CHAT_TEST_DB_URL; see tests/databases.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from agent_chat.db.engine import make_engine, migrate
from tests.support.databases import fresh_database


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with fresh_database(tmp_path / "export.db") as url:
        migrate(url)
        engine = make_engine(url)
        yield engine
        engine.dispose()
