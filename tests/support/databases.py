"""Fresh databases for tests: a SQLite file by default, a new PostgreSQL database when
AGENT_CHAT_TEST_DB_URL names a PostgreSQL server (`./test.sh` runs the suite both ways).

Each test (or module, or session) gets its own database, created through the server URL's
database and dropped afterwards (WITH (FORCE), so a connection a test left open cannot keep it
alive). Creating and dropping one takes about 0.1 s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

from sqlalchemy import Engine, create_engine, pool
from sqlalchemy.engine import make_url

TEST_DB_URL_ENV = "AGENT_CHAT_TEST_DB_URL"


def database_server_url() -> str | None:
    """The PostgreSQL URL the tests should use, or None for SQLite."""
    return os.environ.get(TEST_DB_URL_ENV) or None


@contextmanager
def fresh_database(sqlite_path: Path) -> Iterator[str]:
    """The URL of a new, empty database (not migrated); dropped when the block ends.

    Without AGENT_CHAT_TEST_DB_URL it is the SQLite file `sqlite_path` (left to tmp_path).
    """
    server = database_server_url()
    if server is None:
        yield f"sqlite:///{sqlite_path}"
        return
    url = make_url(server)
    if url.get_backend_name() != "postgresql":
        raise ValueError(f"{TEST_DB_URL_ENV} must be a PostgreSQL URL, not {url.drivername}")
    name = f"{url.database or 'agent_chat'}_{uuid4().hex[:16]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield url.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@contextmanager
def migrated_engine(url: str) -> Iterator[Engine]:
    """An engine on `url` after `migrate()` built the schema; disposed when the block ends."""
    import agent_chat.db.models  # noqa: F401  (registers the tables)
    from agent_chat.db.engine import make_engine, migrate

    migrate(url)
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
