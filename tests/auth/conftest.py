"""Fixtures of the gate tests: a settable clock, a database with an administrator, and the
gate in front of a stand-in for Reflex (built by `tests.support.gate`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from agent_chat.db import users
from agent_chat.runs.storage import Storage
from tests.support.accounts import use_cheap_hashes
from tests.support.gate import Clock, add_user, client_for, gated


@pytest.fixture(autouse=True)
def _cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def alice(storage: Storage):
    return add_user(storage, role=users.UserRole.ADMIN)


@pytest.fixture
async def client(storage: Storage, clock: Clock, alice) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(gated(storage, clock)) as client:
        yield client
