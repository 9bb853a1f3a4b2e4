"""Engine, migrations and the unit-of-work session helper."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlmodel import Session

from agent_chat.config import normalize_db_url
from agent_chat.db.search_schema import register_sqlite_function

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
ALEMBIC_INI = PROJECT_ROOT / "alembic.ini"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def ensure_sqlite_dir(url: str) -> None:
    """Create the folder of a SQLite database file (SQLite creates the file, not the folder)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    database = parsed.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # SQLite enforces foreign keys (and so ON DELETE CASCADE) only when asked, per connection.
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        # WAL lets the app read while a run's log writer writes; busy_timeout waits for a lock
        # instead of failing at once with "database is locked".
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=5000")
    finally:
        cursor.close()


# PostgreSQL text cannot hold NUL (U+0000): psycopg refuses such a string ("PostgreSQL text
# fields cannot contain NUL (0x00) bytes"), so one NUL in a message, an agent's answer or a
# tool result (a binary file read by a tool) would fail the whole write, and a run's log batch
# would never be stored. On PostgreSQL every string parameter has its NULs replaced by U+FFFD
# (the replacement character) instead; SQLite keeps them.
NUL_REPLACEMENT = "\ufffd"


@cache
def _nul_free_dumpers() -> list[type]:
    """psycopg's str dumpers, in its registration order, each replacing NUL first."""
    from psycopg.types import string

    def nul_free(base: type) -> type:
        def dump(self: Any, obj: str) -> Any:
            return base.dump(self, obj.replace("\x00", NUL_REPLACEMENT))

        return type(f"NulFree{base.__name__}", (base,), {"dump": dump})

    names = (
        "StrBinaryDumperName",
        "StrBinaryDumperVarchar",
        "StrBinaryDumper",
        "StrDumperName",
        "StrDumperVarchar",
        "StrDumper",
        "StrDumperUnknown",  # last: the default for str
    )
    return [nul_free(getattr(string, name)) for name in names]


def _psycopg_connect(dbapi_connection: Any, _record: Any) -> None:
    for dumper in _nul_free_dumpers():
        dbapi_connection.adapters.register_dumper(str, dumper)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets its folder, foreign keys, WAL and a busy timeout,
    PostgreSQL (psycopg) strings with NUL replaced."""
    url = normalize_db_url(url)
    if not is_sqlite(url):
        engine = create_engine(url, pool_pre_ping=True)
        if engine.dialect.driver == "psycopg":
            event.listen(engine, "connect", _psycopg_connect)
        return engine
    ensure_sqlite_dir(url)
    # Reflex and the run manager use the engine from several threads.
    engine = create_engine(url, connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _sqlite_pragmas)
    # The full-text index's triggers call it on every write of a message or title.
    event.listen(engine, "connect", register_sqlite_function)
    return engine


def migrate(url: str) -> None:
    """Bring the database at `url` to the newest schema (`alembic upgrade head`).

    Idempotent, so the app calls it on every start. The ini file is found from the package,
    so the current directory does not matter.
    """
    # Importing alembic's autogenerate (alembic.command does) logs one "setup plugin ..." line
    # per built-in plugin at INFO: not news for anyone reading the app's start.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    from alembic import command
    from alembic.config import Config

    url = normalize_db_url(url)
    ensure_sqlite_dir(url)
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    # ConfigParser interpolates "%", which URL-encoded passwords contain.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    # The app configures logging itself; alembic's fileConfig would disable its loggers.
    config.attributes["configure_logging"] = False
    log.info("Migrating database to head: %s", make_url(url).render_as_string())
    command.upgrade(config, "head")


@contextmanager
def open_session(engine: Engine) -> Iterator[Session]:
    """A session that commits when the block succeeds and rolls back when it raises.

    `expire_on_commit=False` keeps returned objects readable after the block.
    """
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


# pg_advisory_lock's key for the start-up (any fixed bigint; "agentcht" in ASCII).
STARTUP_LOCK_KEY = 0x6167656E74636874


@contextmanager
def startup_lock(url: str) -> Iterator[None]:
    """One process at a time through the start-up's database work (migrations, the first
    administrator, the model from the environment): several web workers start at once
    (Reflex's GRANIAN_WORKERS) and would otherwise migrate one database side by side.
    PostgreSQL: a session advisory lock on a connection of its own; SQLite: an exclusive
    `flock` on a file beside the database."""
    url = normalize_db_url(url)
    if not is_sqlite(url):
        from sqlalchemy import pool, text

        # Autocommit, and tried rather than waited for: a worker blocked in
        # pg_advisory_lock would sit in an open transaction, which a migration's CREATE
        # INDEX CONCURRENTLY waits for (it waits out every transaction): a deadlock.
        engine = create_engine(url, poolclass=pool.NullPool, isolation_level="AUTOCOMMIT")
        key = {"k": STARTUP_LOCK_KEY}
        try:
            with engine.connect() as connection:
                while not connection.execute(text("SELECT pg_try_advisory_lock(:k)"), key).scalar():
                    time.sleep(0.2)
                try:
                    yield
                finally:
                    connection.execute(text("SELECT pg_advisory_unlock(:k)"), key)
        finally:
            engine.dispose()
        return
    database = make_url(url).database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    import fcntl

    ensure_sqlite_dir(url)
    with open(f"{database}.startup-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
