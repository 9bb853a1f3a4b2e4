"""The attachments' migrations on the test's database (SQLite, or PostgreSQL with
AGENT_CHAT_TEST_DB_URL): the tables (845e3d173d88) up, down and up again with rows in them;
one row per owner, bytes and name (d5f7a9b1c3e5), whose downgrade loses no file."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from agent_chat.db.engine import make_engine, migrate
from agent_chat.db.models import utcnow
from tests.support.databases import alembic_config

BEFORE = "a140ebfbd831"
ATTACHMENTS = "845e3d173d88"
PER_NAME_BEFORE = "c4e6a8b0d2f4"  # the revision before one row per owner, bytes and name
TABLES = {"attachment", "attachment_chunk", "message_attachment"}


def _person(connection: sa.Connection, username: str) -> int:
    """A member, written as SQL: the tables' models may be newer than the schema here."""
    return connection.execute(
        sa.text(
            "INSERT INTO app_user (username, display_name, password_hash, role, disabled,"
            " password_changed_at, created_at) VALUES (:u, :u, 'x', 'member', false, :now,"
            " :now) RETURNING id"
        ),
        {"u": username, "now": utcnow()},
    ).scalar_one()


def test_up_down_and_up_again(empty_db_url: str) -> None:
    config = alembic_config(empty_db_url)
    command.upgrade(config, BEFORE)
    engine = make_engine(empty_db_url)
    try:
        assert not TABLES & set(sa.inspect(engine).get_table_names())
        migrate(empty_db_url)
        assert set(sa.inspect(engine).get_table_names()) >= TABLES
        with engine.begin() as connection:
            now = utcnow()
            owner = _person(connection, "ann")
            connection.execute(
                sa.text(
                    "INSERT INTO attachment_chunk (storage_key, seq, data, created_at)"
                    " VALUES ('k', 0, :data, :now)"
                ),
                {"data": b"\x00\xffbytes", "now": now},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO attachment (owner_id, sha256, name, media_type, size,"
                    " storage_key, created_at) VALUES (:o, :sha, 'a.bin',"
                    " 'application/octet-stream', 7, 'k', :now)"
                ),
                {"o": owner, "sha": "0" * 64, "now": now},
            )
            data = connection.execute(sa.text("SELECT data FROM attachment_chunk")).scalar_one()
            assert bytes(data) == b"\x00\xffbytes"
        command.downgrade(config, BEFORE)
        assert not TABLES & set(sa.inspect(engine).get_table_names())
        command.upgrade(config, ATTACHMENTS)
        assert set(sa.inspect(engine).get_table_names()) >= TABLES
    finally:
        engine.dispose()


def test_the_same_bytes_under_two_names_are_two_rows_and_a_downgrade_keeps_both(
    empty_db_url: str,
) -> None:
    migrate(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as connection:
            now = utcnow()
            owner = _person(connection, "bo")
            for key, name in (("k1", "a.csv"), ("k2", "b.csv")):
                connection.execute(
                    sa.text(
                        "INSERT INTO attachment (owner_id, sha256, name, media_type, size,"
                        " storage_key, created_at) VALUES (:o, :sha, :name, 'text/plain', 3,"
                        " :key, :now)"
                    ),
                    {"o": owner, "sha": "1" * 64, "name": name, "key": key, "now": now},
                )
        with pytest.raises(RuntimeError, match="several names"):
            command.downgrade(alembic_config(empty_db_url), PER_NAME_BEFORE)
        with engine.connect() as connection:
            count = connection.execute(sa.text("SELECT count(*) FROM attachment")).scalar_one()
        assert count == 2
    finally:
        engine.dispose()
