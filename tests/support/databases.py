"""Fresh databases for tests: a SQLite file by default, a new PostgreSQL database when
AGENT_CHAT_TEST_DB_URL names a PostgreSQL server (`./test.sh` runs the suite both ways).

Each test (or module, or session) gets its own database, created through the server URL's
database and dropped afterwards (WITH (FORCE), so a connection a test left open cannot keep it
alive). Creating and dropping one takes about 0.1 s; tests that need the schema get a copy of
one database `migrate()` built for the session (migrating takes as long again).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

from sqlalchemy import create_engine, pool
from sqlalchemy.engine import make_url

TEST_DB_URL_ENV = "AGENT_CHAT_TEST_DB_URL"


def database_server_url() -> str | None:
    """The PostgreSQL URL the tests should use, or None for SQLite."""
    return os.environ.get(TEST_DB_URL_ENV) or None


@contextmanager
def fresh_database(sqlite_path: Path, template: str | None = None) -> Iterator[str]:
    """The URL of a new database, dropped when the block ends: empty (not migrated), or a copy
    of `template` (a URL from `migrated_template`).

    Without AGENT_CHAT_TEST_DB_URL it is the SQLite file `sqlite_path` (left to tmp_path).
    """
    server = database_server_url()
    if server is None:
        if template is not None:
            _copy_sqlite(make_url(template).database, sqlite_path)
        yield f"sqlite:///{sqlite_path}"
        return
    url = make_url(server)
    if url.get_backend_name() != "postgresql":
        raise ValueError(f"{TEST_DB_URL_ENV} must be a PostgreSQL URL, not {url.drivername}")
    name = f"{url.database or 'agent_chat'}_{uuid4().hex[:16]}"
    copy_of = f' TEMPLATE "{make_url(template).database}"' if template is not None else ""
    admin = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"{copy_of}')
        try:
            yield url.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@contextmanager
def migrated_template(sqlite_path: Path) -> Iterator[str]:
    """A database whose schema `migrate()` built, for `fresh_database(template=...)` to copy:
    migrating once per session instead of once per test (a copy is a file copy, or
    PostgreSQL's CREATE DATABASE ... TEMPLATE)."""
    from agent_chat.db.engine import migrate

    with fresh_database(sqlite_path) as url:
        migrate(url)
        yield url


def _copy_sqlite(source: str | None, target: Path) -> None:
    """A consistent copy through SQLite's backup API (whatever its write-ahead log holds)."""
    assert source, "a SQLite template needs a file"
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)
