"""The fixtures of the checkpoint tests through real runs: the workspaces root both sides
read, and a real RunManager with services/checkpoints.py attached as services/runtime.py
attaches it (the real bridge, hermes and the scripted model)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_chat.runs.storage import Storage
from agent_chat.services import checkpoints
from tests.fakes.model_server import RunningFakeModel
from tests.support.runs import fake_model_row, managers

PROFILES = ("chat", "workspace")


@pytest.fixture
def workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The root both sides read: the bridge from its settings, the app from the environment."""
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AGENT_CHAT_WORKSPACES_DIR", str(root))
    return root


@pytest.fixture
async def svc(
    db_url: str, storage: Storage, start_bridge: Any, fake_model: RunningFakeModel, workspaces: Path
) -> AsyncIterator[SimpleNamespace]:
    bridge = start_bridge(
        keepalive_interval_s=0.5, tool_profiles=PROFILES, workspaces_root=workspaces
    )
    fake_model_row(storage, fake_model)
    async with managers(db_url, storage) as make:
        runs = await make(bridge.base_url, tool_profiles=PROFILES)
        checkpoints.attach(runs)
        yield SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)
