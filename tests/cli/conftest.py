"""tests/cli drives the shared stack (tests/support/stack.py) as tests/api does: its
fixtures `api_stack` and `api_token` are tests/support/api.py's, registered by tests/conftest.py."""

from __future__ import annotations

import pytest

from tests.cli.runner import Cli
from tests.support.stack import Stack


@pytest.fixture(scope="module")
def cli(api_stack: Stack, api_token: str) -> Cli:
    return Cli(api_stack, api_token)
