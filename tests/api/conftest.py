"""The HTTP API tests drive the test process's one real stack (fake model, bridge with
hermes-agent, the app behind its login: tests/support/stack.py `shared_stack`) with a
personal API token (`api_stack`, `api_token`: tests/support/api.py, registered by
tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.api import api_client
from tests.support.stack import Stack


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    """The API with a personal token (the app has a password)."""
    with api_client(api_stack, api_token) as client:
        yield client
