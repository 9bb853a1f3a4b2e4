"""Alembic environment: the schema is `SQLModel.metadata` of agent_chat.db.models."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, event, pool
from sqlmodel import SQLModel

import agent_chat.db.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from agent_chat.config import load_settings
from agent_chat.db.engine import ensure_sqlite_dir, is_sqlite
from agent_chat.db.search_schema import include_object, register_sqlite_function

config = context.config

# migrate() configures no logging (the app owns it); the CLI gets alembic.ini's.
if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name)

target_metadata = SQLModel.metadata


def _url() -> str:
    # Set by agent_chat.db.engine.migrate(url); the CLI falls back to the settings.
    return config.get_main_option("sqlalchemy.url") or load_settings().db_url


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=is_sqlite(url),
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = _url()
    ensure_sqlite_dir(url)
    # A plain engine, not make_engine(): SQLite batch migrations recreate tables, which must
    # not run with foreign_keys=ON (dropping the old table would cascade-delete rows).
    connectable = create_engine(url, poolclass=pool.NullPool)
    if is_sqlite(url):  # a migration that writes messages fires the search index's triggers
        event.listen(connectable, "connect", register_sqlite_function)
    with connectable.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
            include_object=include_object,  # the search index is not in the models
        )
        with context.begin_transaction():
            context.run_migrations()
    connectable.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
