"""The bridge for tests: served by uvicorn in a thread of the test process, or as the real
``python -m agent_chat.bridge`` process."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.fakes.model_server import RunningFakeModel, free_port, serve_in_thread
from tests.support.processes import start_process

# One API attempt instead of three: a dead endpoint fails in seconds, not ~24 s. No
# environment probe: hermes runs `pip --version` three ways once per process for a line
# of its system prompt (~1.1 CPU-s in every bridge process and test worker; no test reads it).
HERMES_CONFIG = "agent:\n  api_max_retries: 1\n  environment_probe: false\n"


def hermes_home(path: Path) -> Path:
    """`path` made a HERMES_HOME for tests (created if missing, with HERMES_CONFIG)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.yaml").write_text(HERMES_CONFIG, encoding="utf-8")
    return path


@dataclass
class RunningBridge:
    """A bridge served by uvicorn in a thread."""

    base_url: str
    app: Any

    def model(self, fake: RunningFakeModel, **extra: Any) -> dict[str, Any]:
        """A ``model`` body field pointing at the fake model server."""
        return {"base_url": fake.base_url, "model": "fake-model", **extra}


StartBridge = Callable[..., RunningBridge]


@contextlib.contextmanager
def bridges_in_threads(home: Path) -> Iterator[StartBridge]:
    """``start(**settings_overrides)`` starts a bridge in a thread; all stop with the block."""
    from agent_chat.bridge.app import create_app
    from agent_chat.bridge.settings import BridgeSettings

    apps: list[Any] = []
    with contextlib.ExitStack() as stack:

        def start(**overrides: Any) -> RunningBridge:
            # No warm-up thread per short-lived test bridge: this process has hermes warm.
            settings = replace(BridgeSettings(hermes_home=home), warm_up=False)
            app = create_app(replace(settings, **overrides))
            apps.append(app)
            port = stack.enter_context(serve_in_thread(app))
            return RunningBridge(base_url=f"http://127.0.0.1:{port}", app=app)

        yield start
        # Wake any question still waiting so no run thread outlives its test for long.
        for app in apps:
            app.state.registry.stop_all()


def start_bridge_process(
    home: Path, log: Path, *, port: int | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """``python -m agent_chat.bridge`` on `port` (a free one by default) with HERMES_HOME
    `home`; returns the process once /health answers, and the bridge's URL."""
    port = port or free_port()
    process = start_process(
        [sys.executable, "-m", "agent_chat.bridge", "--port", str(port)],
        env={**(env if env is not None else os.environ), "HERMES_HOME": str(home)},
        log=log,
        health=f"http://127.0.0.1:{port}/health",
        timeout=90,
    )
    return process, f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def bridge_process(tmp: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """A bridge process of its own (its hermes home and log in `tmp`) and its URL; killed
    at the end unless a test already did."""
    process, url = start_bridge_process(hermes_home(tmp / "home"), tmp / "bridge.log")
    try:
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
