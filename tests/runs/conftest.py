"""Fixtures for RunManager tests: the fake model as the default model, and managers over
real bridges (the database fixtures are in tests/conftest.py, the helpers in
tests/support/runs.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support import runs
from tests.support.redis import new_prefix, redis_server
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


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server for this test session (tests/support/redis.py)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
async def make_worker(db_url: str, storage: Storage, redis_url: str) -> AsyncIterator[MakeManager]:
    """`await make_worker(bridge_url, **settings_overrides)`: a started RunManager that is a
    worker of its own over Redis (its own client, bus and leases), all of a test sharing one
    key prefix."""
    async with runs.managers(db_url, storage, redis_url=redis_url, prefix=new_prefix()) as make:
        yield make


@pytest.fixture(params=["local", "redis"])
async def make_bus_manager(
    request: pytest.FixtureRequest, db_url: str, storage: Storage
) -> AsyncIterator[MakeManager]:
    """`make_manager` over each bus: in-process, then Redis (the same contract)."""
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    async with runs.managers(db_url, storage, redis_url=redis, prefix=new_prefix()) as make:
        yield make
