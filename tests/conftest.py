"""Shared pytest fixtures."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import RunningFakeModel, running_fake_model, serve_in_thread

# --- fake model server and bridge (tests/bridge, and anyone needing a model endpoint) -------


@pytest.fixture(scope="session")
def fake_model() -> Iterator[RunningFakeModel]:
    """The scripted OpenAI-compatible server, one per test session (see its module doc)."""
    with running_fake_model(token_delay=0.0) as server:
        yield server


@pytest.fixture(scope="session")
def hermes_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One HERMES_HOME for the whole session: hermes fixes its paths when first imported."""
    home = tmp_path_factory.mktemp("hermes-home")
    # One API attempt instead of three: a dead endpoint fails in seconds, not ~24 s.
    (home / "config.yaml").write_text("agent:\n  api_max_retries: 1\n", encoding="utf-8")
    return home


@dataclass
class RunningBridge:
    """A bridge served by uvicorn in a thread."""

    base_url: str
    app: Any

    def model(self, fake: RunningFakeModel, **extra: Any) -> dict[str, Any]:
        """A ``model`` body field pointing at the fake model server."""
        return {"base_url": fake.base_url, "model": "fake-model", **extra}


@pytest.fixture
def start_bridge(hermes_home: Path) -> Iterator[Callable[..., RunningBridge]]:
    """Start a bridge with settings overrides: ``start_bridge(max_active_runs=1)``."""
    from agent_chat.bridge.app import create_app
    from agent_chat.bridge.settings import BridgeSettings

    stack = contextlib.ExitStack()
    apps: list[Any] = []

    def start(**overrides: Any) -> RunningBridge:
        settings = replace(BridgeSettings(hermes_home=hermes_home), **overrides)
        app = create_app(settings)
        apps.append(app)
        port = stack.enter_context(serve_in_thread(app))
        return RunningBridge(base_url=f"http://127.0.0.1:{port}", app=app)

    with stack:
        yield start
        # Wake any question still waiting so no run thread outlives its test for long.
        for app in apps:
            app.state.registry.stop_all()


@pytest.fixture
def bridge(start_bridge: Callable[..., RunningBridge]) -> RunningBridge:
    """A bridge with default settings except a short keep-alive interval."""
    return start_bridge(keepalive_interval_s=0.5)


# --- end of fake model server and bridge fixtures ------------------------------------------


# --- ordering ------------------------------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests run last: sync Playwright keeps an event loop running in the main thread
    for the rest of the session, which breaks later asyncio tests."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
