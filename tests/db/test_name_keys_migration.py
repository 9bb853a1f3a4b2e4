"""The migration to name keys (a140ebfbd831) on a database written before it:
every folder and model gets its key; of names that now share one, the oldest keeps its
name and each later one gets the first free " (n)", logged; the old constraints come back
on the way down."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine

from agent_chat.db import folders, model_configs
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import utcnow
from agent_chat.db.names import name_key
from tests.support.databases import alembic_config

BEFORE = "9d5e7f1a3b6c"
NAME_KEYS = "a140ebfbd831"

# In id order, per owner ("ann", "ben", none: an install from before accounts).
OLD_FOLDERS = [
    ("ann", "Écrits"),
    ("ann", "écrits"),  # SQLite's lower() let it in beside Écrits
    ("ann", "écrits (2)"),  # a later row's own name: the rename must not take it
    ("ann", "e\u0301crits"),
    ("ben", "écrits"),  # another person's: theirs to keep
    (None, "Old"),
    (None, "OLD"),
    ("ann", "x" * 60),
    ("ann", "X" * 60),
]
OLD_MODELS = ["GPT", "ｇｐｔ", "Local", "gpt"]


def _old_rows(engine: Engine) -> dict[str, int]:
    now = utcnow()
    with engine.begin() as connection:
        owners = {
            name: connection.execute(
                sa.text(
                    "INSERT INTO app_user (username, display_name, password_hash, role,"
                    " disabled, password_changed_at, created_at) VALUES (:u, :u, 'x', 'member',"
                    " false, :now, :now) RETURNING id"
                ),
                {"u": name, "now": now},
            ).scalar_one()
            for name in ("ann", "ben")
        }
        for owner, name in OLD_FOLDERS:
            connection.execute(
                sa.text(
                    "INSERT INTO chat_folder (owner_id, name, collapsed, created_at)"
                    " VALUES (:o, :n, false, :now)"
                ),
                {"o": owners.get(owner), "n": name, "now": now},
            )
        for name in OLD_MODELS:
            connection.execute(
                sa.text(
                    "INSERT INTO model_config (name, base_url, model_name, is_default,"
                    " created_at) VALUES (:n, 'http://localhost:1/v1', 'm', false, :now)"
                ),
                {"n": name, "now": now},
            )
    return owners


def _folders(engine: Engine) -> list[tuple[int | None, str]]:
    with engine.connect() as connection:
        query = "SELECT owner_id, name FROM chat_folder ORDER BY id"
        return [tuple(row) for row in connection.execute(sa.text(query))]


def test_keys_are_filled_and_later_colliding_names_renamed(
    empty_db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = alembic_config(empty_db_url)
    command.upgrade(config, BEFORE)
    engine = make_engine(empty_db_url)
    try:
        owners = _old_rows(engine)
        ann, ben = owners["ann"], owners["ben"]
        with caplog.at_level(logging.INFO, logger="agent_chat.migrations"):
            migrate(empty_db_url)
        assert _folders(engine) == [
            (ann, "Écrits"),
            (ann, "écrits (3)"),
            (ann, "écrits (2)"),
            (ann, "e\u0301crits (4)"),
            (ben, "écrits"),
            (None, "Old"),
            (None, "OLD (2)"),
            (ann, "x" * 60),
            (ann, "X" * 56 + " (2)"),  # within a folder name's 60 characters
        ]
        with engine.connect() as connection:
            keys = connection.execute(sa.text("SELECT name, name_key FROM chat_folder")).all()
            models = connection.execute(sa.text("SELECT name FROM model_config ORDER BY id"))
            assert [row[0] for row in models] == ["GPT", "ｇｐｔ (2)", "Local", "gpt (3)"]
        assert all(key == name_key(name) for name, key in keys)
        renames = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(renames) == 6
        assert "chat_folder 2: 'écrits' has the name key of an older row (owner_id=" in renames[0]
        assert any(
            "model_config 2: 'ｇｐｔ'" in line and "'ｇｐｔ (2)'" in line for line in renames
        )
        # The store sees the same names as taken, in every spelling.
        with pytest.raises(ValidationFailed), open_session(engine) as session:
            folders.create_folder(session=session, user_id=ann, name="ÉCRITS (3)")
        with pytest.raises(ValidationFailed), open_session(engine) as session:
            model_configs.create_model(
                session=session, name="Gpt", base_url="http://localhost:1/v1", model_name="m"
            )
        # Down: the old constraints hold over the renamed names; up again: the same keys.
        command.downgrade(config, BEFORE)
        assert len(_folders(engine)) == len(OLD_FOLDERS)
        command.upgrade(config, NAME_KEYS)
        with engine.connect() as connection:
            keys = connection.execute(sa.text("SELECT name, name_key FROM chat_folder")).all()
        assert all(key == name_key(name) for name, key in keys)
    finally:
        engine.dispose()
