"""Fixtures for RunManager tests: the fake model as the default model, and managers over
real bridges (the database fixtures are in tests/conftest.py, the helpers in
tests/support/runs.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support import runs
from tests.support.runs import MakeManager


@pytest.fixture
def fake_model_row(storage: Storage, fake_model: RunningFakeModel) -> int:
    """The default model: the scripted fake model server."""
    return runs.fake_model_row(storage, fake_model)


@pytest.fixture
async def make_manager(db_url: str, storage: Storage) -> AsyncIterator[MakeManager]:
    """`await make_manager(bridge_url, **settings_overrides)`: a started RunManager.

    Every manager made here is closed (runs go on in the bridge) and its client closed.
    """
    async with runs.managers(db_url, storage) as make:
        yield make
