"""Several web workers starting together on a fresh PostgreSQL database (Reflex's
`GRANIAN_WORKERS`, `./run.sh --scaled`): each migrates and seeds the first model and the first
administrator, one at a time under `db/engine.py:startup_lock`; without it two `CREATE TABLE
alembic_version` (or two "Default" models) collide and a worker dies at start."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_chat.config import Settings
from agent_chat.db import model_configs
from agent_chat.db.engine import make_engine, open_session, startup_lock
from agent_chat.db.users import find_user
from agent_chat.services import _prepare_database
from tests.support.databases import database_server_url, fresh_database

pytestmark = [
    pytest.mark.db,
    pytest.mark.skipif(
        database_server_url() is None, reason="an advisory lock of PostgreSQL (SQLite: none)"
    ),
]


def _settings(db_url: str, tmp_path: Path) -> Settings:
    return Settings(
        db_url=db_url,
        bridge_url="http://127.0.0.1:9",
        bridge_token=None,
        app_host="127.0.0.1",
        app_port=0,
        skills_dir=tmp_path,
        max_active_runs=5,
        max_message_chars=1000,
        env_model_base_url="http://127.0.0.1:9/v1",
        env_model_api_key="k",
        env_model_name="m",
        env_model_context_length=131072,
        admin_user="admin",
        admin_password="a-long-enough-password",
    )


def test_workers_starting_together_migrate_and_seed_once(tmp_path: Path) -> None:
    with fresh_database(tmp_path / "unused.db") as db_url:
        settings = _settings(db_url, tmp_path)
        engines = [make_engine(db_url) for _ in range(3)]
        barrier = threading.Barrier(len(engines))
        errors: list[BaseException] = []

        def start(engine) -> None:
            barrier.wait()
            try:
                _prepare_database(settings, engine)
            except BaseException as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)

        threads = [threading.Thread(target=start, args=(e,)) for e in engines]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        try:
            assert errors == []
            with open_session(engines[0]) as session:
                assert [m.name for m in model_configs.list_models(session=session)] == ["Default"]
                assert find_user(session=session, username="admin") is not None
        finally:
            for engine in engines:
                engine.dispose()


def test_the_lock_is_held_by_one_at_a_time(tmp_path: Path) -> None:
    with fresh_database(tmp_path / "unused.db") as db_url:
        inside = threading.Event()
        second_in = threading.Event()

        def second() -> None:
            with startup_lock(db_url):
                second_in.set()

        with startup_lock(db_url):
            inside.set()
            other = threading.Thread(target=second)
            other.start()
            assert not second_in.wait(1.0)  # waits while the first holds it
        other.join(30)
        assert second_in.is_set()  # and gets it once released
