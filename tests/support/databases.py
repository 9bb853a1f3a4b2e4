"""Fresh databases for tests: a SQLite file by default, a new PostgreSQL database when
AGENT_CHAT_TEST_DB_URL names a PostgreSQL server (`./test.sh` runs the suite both ways).

Each test (or module, or session) gets its own database, created through the server URL's
database and dropped afterwards (WITH (FORCE), so a connection a test left open cannot keep it
alive). Creating and dropping one takes about 0.1 s; tests that need the schema get a copy of
one database `migrate()` built for the session (migrating takes as long again), and on
PostgreSQL a copy emptied after an earlier test (`MigratedDatabases`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

from alembic.config import Config
from sqlalchemy import Engine, create_engine, pool
from sqlalchemy.engine import make_url

from agent_chat.db.engine import ALEMBIC_INI, PROJECT_ROOT

TEST_DB_URL_ENV = "AGENT_CHAT_TEST_DB_URL"


def database_server_url() -> str | None:
    """The PostgreSQL URL the tests should use, or None for SQLite."""
    return os.environ.get(TEST_DB_URL_ENV) or None


@contextmanager
def fresh_database(sqlite_path: Path, template: str | None = None) -> Iterator[str]:
    """The URL of a new database, dropped when the block ends: empty (not migrated), or a copy
    of `template` (`MigratedDatabases.template_url`).

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


class MigratedDatabases:
    """A database with the schema for each test, the schema built by `migrate()` once.

    SQLite: each test gets a copy of a file migrate() built. PostgreSQL: each test gets a
    database copied from a migrated template (CREATE DATABASE ... TEMPLATE), and when the
    test is done it is emptied (its other connections ended, every table truncated with its
    identity sequences restarted: the state of a new copy) and handed to a later test;
    emptying takes milliseconds, CREATE DATABASE a tenth of a second, more under load. A
    database that cannot be emptied is dropped.
    """

    def __init__(self, workdir: Path) -> None:
        from agent_chat.db.engine import migrate

        self._template = contextlib.ExitStack()
        self.template_url = self._template.enter_context(fresh_database(workdir / "template.db"))
        migrate(self.template_url)
        self._free: list[str] = []
        self._made: list[str] = []

    @contextmanager
    def database(self, sqlite_path: Path) -> Iterator[str]:
        if database_server_url() is None:
            with fresh_database(sqlite_path, template=self.template_url) as url:
                yield url
            return
        url = self._free.pop() if self._free else self._copy()
        try:
            yield url
        finally:
            if self._emptied(url):
                self._free.append(url)
            else:
                self._drop(url)

    def close(self) -> None:
        for url in self._made:
            self._drop(url)
        self._template.close()

    def _admin(self) -> Engine:
        server = database_server_url()
        assert server is not None
        return create_engine(
            make_url(server), isolation_level="AUTOCOMMIT", poolclass=pool.NullPool
        )

    def _copy(self) -> str:
        server = make_url(self.template_url)
        name = f"{server.database}_{uuid4().hex[:8]}"
        admin = self._admin()
        try:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{server.database}"')
        finally:
            admin.dispose()
        url = server.set(database=name).render_as_string(hide_password=False)
        self._made.append(url)
        return url

    def _emptied(self, url: str) -> bool:
        from sqlmodel import SQLModel

        import agent_chat.db.models  # noqa: F401  (registers the tables)

        name = make_url(url).database
        admin = self._admin()
        engine = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
        tables = ", ".join(f'"{table.name}"' for table in SQLModel.metadata.sorted_tables)
        try:
            with admin.connect() as connection:
                connection.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
            with engine.connect() as connection:
                connection.exec_driver_sql("SET lock_timeout = '5s'")
                connection.exec_driver_sql(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
            return True
        except Exception:  # noqa: BLE001  (any failure: the database is dropped instead)
            return False
        finally:
            engine.dispose()
            admin.dispose()

    def _drop(self, url: str) -> None:
        if url in self._free:
            self._free.remove(url)
        if url in self._made:
            self._made.remove(url)
        admin = self._admin()
        try:
            with admin.connect() as connection:
                name = make_url(url).database
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            admin.dispose()


def _copy_sqlite(source: str | None, target: Path) -> None:
    """A consistent copy through SQLite's backup API (whatever its write-ahead log holds)."""
    assert source, "a SQLite template needs a file"
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


# The schema just before accounts (tests that start from a password-only install).
BEFORE_ACCOUNTS = "6d1f3b5a7c9e"


def alembic_config(url: str) -> Config:
    """Alembic's configuration for `url`, as the app's migrate() builds it."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["configure_logging"] = False
    return config
