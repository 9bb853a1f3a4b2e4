"""The launcher keeps the bridge running: a killed bridge comes back by itself, and the next
run on it succeeds."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from agent_chat.launch.serve import spawn_bridge, stop
from agent_chat.launch.supervisor import BridgeSupervisor, bridge_healthy
from tests.fakes.model_server import RunningFakeModel, free_port
from tests.support.bridge import hermes_home


def wait(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


def test_a_killed_bridge_is_started_again_and_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_model: RunningFakeModel
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home(tmp_path / "hermes")))
    monkeypatch.setenv("AGENT_CHAT_BRIDGE_TOKEN", "supervised")
    url = f"http://127.0.0.1:{free_port()}"
    supervisor = BridgeSupervisor(lambda: spawn_bridge(url), first_pause_s=0.2)
    supervisor.start(spawn_bridge(url))
    try:
        killed = supervisor.process.pid
        os.kill(killed, signal.SIGKILL)
        wait(lambda: supervisor.restarts == 1 and bridge_healthy(url))
        assert supervisor.process.pid != killed
        headers = {"Authorization": "Bearer supervised"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            body = {
                "user": 1,
                "session_id": "after-restart",
                "message": "hello again",
                "model": {"base_url": fake_model.base_url, "model": "fake-model"},
            }
            run_id = client.post("/runs", json=body).raise_for_status().json()["run_id"]
            wait(lambda: client.get(f"/runs/{run_id}").json()["status"] == "succeeded")
    finally:
        process = supervisor.stop()
        if process is not None:
            stop(process)
    assert not bridge_healthy(url)  # stopping the supervisor does not start another
