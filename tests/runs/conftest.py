"""Fixtures for RunManager tests: a migrated database (SQLite, or PostgreSQL when
AGENT_CHAT_TEST_DB_URL is set) and managers over real bridges."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from agent_chat.config import Settings, load_settings
from agent_chat.db import model_configs
from agent_chat.db.engine import make_engine, migrate
from agent_chat.runs.client import BridgeClient
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from tests.databases import fresh_database
from tests.fakes.model_server import RunningFakeModel


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    with fresh_database(tmp_path / "runs.db") as url:
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    migrate(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def storage(engine: Engine) -> Storage:
    return Storage(engine)


@pytest.fixture
def fake_model_row(storage: Storage, fake_model: RunningFakeModel) -> int:
    """The default model: the scripted fake model server."""
    model = storage.call_sync(
        model_configs.create_model,
        name="Fake",
        base_url=fake_model.base_url,
        model_name="fake-model",
        is_default=True,
    )
    return model.id


MakeManager = Callable[..., Any]


@pytest.fixture
async def make_manager(db_url: str, storage: Storage) -> AsyncIterator[MakeManager]:
    """`await make_manager(bridge_url, **settings_overrides)`: a started RunManager.

    Every manager made here is closed (runs go on in the bridge) and its client closed.
    """
    made: list[tuple[RunManager, BridgeClient]] = []

    async def make(bridge_url: str, *, start: bool = True, **overrides: Any) -> RunManager:
        settings: Settings = dataclasses.replace(
            load_settings(), db_url=db_url, bridge_url=bridge_url, **overrides
        )
        client = BridgeClient(bridge_url, reconnect_for=2.0)
        manager = RunManager(settings=settings, storage=storage, client=client)
        made.append((manager, client))
        if start:
            await manager.start()
        return manager

    yield make
    for manager, client in made:
        await manager.close()
        await client.aclose()
