"""One real stack (fake model, bridge with hermes-agent, the app behind a password) for
tests/api and tests/cli (tests/support/api.py): starting the app costs most of a minute."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.api import api_client, api_stack, api_stack_and_token, api_token
from tests.support.stack import Stack

__all__ = ["api_stack", "api_stack_and_token", "api_token"]


@pytest.fixture
def client(api_stack: Stack, api_token: str) -> Iterator[httpx.Client]:
    """The API with a personal token (the app has a password)."""
    with api_client(api_stack, api_token) as client:
        yield client
