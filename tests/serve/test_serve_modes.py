"""What `python -m agent_chat.launch.serve` starts in each AGENT_CHAT_BRIDGE mode: external, the
bridge (or the one already running) and the app with the bridge's token; embedded, the app
alone, with no token made and no supervisor. The processes are recorded, not started (the
real embedded app is started by tests/e2e/test_29_embedded.py)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest

from agent_chat.launch import serve


class Recorded:
    """A process that has already ended with code 0."""

    commands: list[list[str]] = []

    def __init__(self, args: list[str], **kwargs: Any) -> None:
        self.commands.append(list(args))
        self.env = kwargs.get("env")
        self.returncode = 0
        self.pid = 0

    def poll(self) -> int:
        return 0

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def send_signal(self, signum: int) -> None:
        pass


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    Recorded.commands = []
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(serve.signal, "signal", lambda *args: None)
    monkeypatch.setenv("AGENT_CHAT_BRIDGE_TOKEN", "")  # restored after the test
    monkeypatch.delenv("AGENT_CHAT_REDIS_URL", raising=False)
    monkeypatch.delenv("REFLEX_REDIS_URL", raising=False)
    return Recorded.commands


def test_embedded_starts_only_the_app(
    launched: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CHAT_BRIDGE", "embedded")

    def no_bridge(url: str) -> None:
        raise AssertionError("no bridge process in embedded mode")

    monkeypatch.setattr(serve, "start_bridge", no_bridge)
    monkeypatch.setattr(serve, "BridgeSupervisor", no_bridge)
    with pytest.raises(SystemExit) as ended:
        serve.main(["--port", "3999"])
    assert ended.value.code == 0
    assert len(launched) == 1 and launched[0][1:4] == ["-m", "reflex", "run"]
    assert os.environ["AGENT_CHAT_BRIDGE_TOKEN"] == ""  # no token made: none is needed


def test_external_starts_the_bridge_with_a_token(
    launched: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_CHAT_BRIDGE", raising=False)
    asked: list[str] = []
    monkeypatch.setattr(serve, "start_bridge", lambda url: asked.append(url))  # one answers
    with pytest.raises(SystemExit):
        serve.main(["--port", "3999"])
    assert len(asked) == 1  # the bridge at AGENT_CHAT_BRIDGE_URL (one already answers here)
    assert len(launched) == 1 and launched[0][1:4] == ["-m", "reflex", "run"]
    assert len(os.environ["AGENT_CHAT_BRIDGE_TOKEN"]) >= 32
