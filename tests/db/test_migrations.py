"""The migration, the engine settings and the unit-of-work helper."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine
from sqlmodel import SQLModel, select

from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.models import ChatSession
from agent_chat.db.search_schema import include_object
from tests.support.databases import alembic_config

TABLES = {"chat_session", "chat_message", "chat_message_log", "run_pause", "model_config"}


def test_migrate_on_an_empty_database_creates_all_tables(empty_db_url: str) -> None:
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        names = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert TABLES | {"alembic_version"} <= names


def test_models_and_migrations_agree(engine: Engine) -> None:
    with engine.connect() as connection:
        opts = {"compare_type": True, "include_object": include_object}  # search index: not models
        context = MigrationContext.configure(connection, opts=opts)
        diffs = compare_metadata(context, SQLModel.metadata)
    assert diffs == []


def test_migrate_twice_is_harmless_and_keeps_data(empty_db_url: str) -> None:
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    with open_session(engine) as session:
        session.add(ChatSession(title="kept"))
    migrate(empty_db_url)
    with open_session(engine) as session:
        titles = [c.title for c in session.exec(select(ChatSession)).all()]
    engine.dispose()
    assert titles == ["kept"]


def test_migrate_does_not_depend_on_the_working_directory(
    empty_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    assert set(sa.inspect(engine).get_table_names()) >= TABLES
    engine.dispose()


def test_sqlite_engine_creates_its_folder_and_sets_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "deeper" / "app.db"
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        foreign_keys = connection.exec_driver_sql("PRAGMA foreign_keys").scalar()
        journal = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        busy = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
    engine.dispose()
    assert path.parent.is_dir()
    assert (foreign_keys, journal, busy) == (1, "wal", 5000)


def test_open_session_commits_on_success_and_rolls_back_on_error(engine: Engine) -> None:
    with open_session(engine) as session:
        chat = ChatSession(title="committed")
        session.add(chat)
    assert chat.title == "committed"  # still readable: expire_on_commit=False
    with pytest.raises(RuntimeError), open_session(engine) as session:
        session.add(ChatSession(title="rolled back"))
        session.flush()
        raise RuntimeError("boom")
    with open_session(engine) as session:
        titles = [c.title for c in session.exec(select(ChatSession)).all()]
    assert titles == ["committed"]


def test_alembic_downgrade_to_base_and_upgrade_again(empty_db_url: str) -> None:
    migrate(empty_db_url)
    command.downgrade(alembic_config(empty_db_url), "base")
    engine = make_engine(empty_db_url)
    assert not TABLES & set(sa.inspect(engine).get_table_names())
    engine.dispose()
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    assert set(sa.inspect(engine).get_table_names()) >= TABLES
    engine.dispose()
