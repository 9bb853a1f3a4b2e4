"""One real stack (fake model, bridge with hermes-agent, the app) for every test module of
tests/api: starting the app costs most of a minute."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.stack import Stack, ensure_fake_model, running_stack


@pytest.fixture(scope="package")
def api_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("api"), token_delay=0.01) as stack:
        ensure_fake_model(None, stack)
        yield stack


@pytest.fixture
def client(api_stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_stack.url, timeout=60) as client:
        yield client
