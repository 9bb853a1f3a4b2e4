"""The bridge started for real, as ``python -m agent_chat.bridge --port N``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fakes.model_server import free_port

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_bridge_process_starts_and_answers_health(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "hermes"), "AGENT_CHAT_BRIDGE_TOKEN": "t"}
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_chat.bridge", "--port", str(port)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        body = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            try:
                body = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).json()
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert body is not None, (
            process.stdout.read().decode() if process.poll() is not None else "no answer"
        )
        assert body["status"] == "ok" and body["active_runs"] == 0
        assert httpx.get(f"http://127.0.0.1:{port}/memory", timeout=5).status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=15)
