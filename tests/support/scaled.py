"""The scaled set-up (`python -m agent_chat.launch.serve --scaled`, agent_chat/launch/scaled.py) started for
real by tests and benchmarks: on free ports, its data folder, its build folder and its hermes
home in a temp folder, the scripted model as the initial default model, the stack's
administrator (tests/support/accounts.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from agent_chat.launch.data_servers import port_free
from tests.support.accounts import ADMIN_ENV
from tests.support.processes import ROOT, free_port, wait_http

_UNSET = (
    "AGENT_CHAT_BRIDGE",
    "AGENT_CHAT_BRIDGE_URL",
    "AGENT_CHAT_BRIDGE_URLS",
    "AGENT_CHAT_BRIDGE_TOKEN",
    "AGENT_CHAT_DB_URL",
    "AGENT_CHAT_REDIS_URL",
    "REFLEX_REDIS_URL",
    "GRANIAN_WORKERS",
    "AGENT_CHAT_PASSWORD",
)


def free_ports_in_a_row(count: int) -> int:
    """The first of `count` consecutive free ports, free as the launcher checks them (its
    bridges are port, +1, …)."""
    for _ in range(50):
        first = free_port()
        if all(port_free(first + i) for i in range(1, count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports")


def _cmdline(process: psutil.Process) -> list[str]:
    """Its command line; [] for one that has just ended (a zombie until reaped)."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


@dataclass
class Scaled:
    process: subprocess.Popen
    url: str
    bridge_urls: list[str]
    log: Path
    env: dict[str, str]

    def launched(self) -> list[psutil.Process]:
        """Every process the launcher started (and theirs)."""
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def bridges(self) -> list[psutil.Process]:
        return [p for p in self.launched() if "agent_chat.bridge" in _cmdline(p)]

    def app(self) -> psutil.Process:
        (app,) = [
            p
            for p in psutil.Process(self.process.pid).children()
            if "reflex" in _cmdline(p) and "run" in _cmdline(p)
        ]
        return app

    def web_workers(self) -> list[psutil.Process]:
        """Reflex's backend workers: the `reflex run` process's forked children (granian)."""
        app = self.app()
        return [c for c in app.children() if _cmdline(c) == app.cmdline()]

    def app_processes(self) -> list[psutil.Process]:
        """The `reflex run` process and its workers (what the app's CPU is measured over)."""
        app = self.app()
        return [app, *app.children(recursive=True)]

    def stop(self, timeout: float = 90) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)


def scaled_env(tmp: Path, model_base_url: str, extra: dict[str, str] | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env.update(
        {
            "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{env['PATH']}",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_CHECK_LATEST_VERSION": "false",
            # A build and state folder of its own: the checkout's .web is not touched.
            "REFLEX_WEB_WORKDIR": str(tmp / "web"),
            "REFLEX_STATES_WORKDIR": str(tmp / "states"),
            "HERMES_HOME": str(tmp / "hermes"),
            "AGENT_CHAT_SKILLS_DIR": str(tmp / "skills"),
            "AGENT_CHAT_MODEL_BASE_URL": model_base_url,
            "AGENT_CHAT_MODEL": "fake-model",
            "AGENT_CHAT_MODEL_API_KEY": "fake",
            "AGENT_CHAT_MODEL_CONTEXT_LENGTH": "131072",
            **ADMIN_ENV,
            **(extra or {}),
        }
    )
    (tmp / "skills").mkdir(parents=True, exist_ok=True)
    hermes = tmp / "hermes"
    hermes.mkdir(parents=True, exist_ok=True)
    (hermes / "config.yaml").write_text("agent:\n  api_max_retries: 1\n", encoding="utf-8")
    return env


@contextlib.contextmanager
def running_scaled(
    tmp: Path,
    env: dict[str, str],
    *,
    data: Path | None = None,
    web_workers: int = 2,
    bridges: int = 2,
    timeout: float = 600,
) -> Iterator[Scaled]:
    """`python -m agent_chat.launch.serve --scaled` until the block ends (SIGTERM, then it must have
    ended within 90 s); its output in `tmp/scaled.log`."""
    port, first_bridge = free_port(), free_ports_in_a_row(bridges)
    cmd = [sys.executable, "-m", "agent_chat.launch.serve", "--scaled", "--port", str(port)]
    cmd += ["--data", str(data or tmp / "data"), "--web-workers", str(web_workers)]
    cmd += ["--bridges", str(bridges), "--bridge-port", str(first_bridge)]
    cmd += ["--pg-port", str(free_port()), "--redis-port", str(free_port())]
    log = tmp / "scaled.log"
    with log.open("ab") as out:
        process = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    scaled = Scaled(
        process=process,
        url=f"http://127.0.0.1:{port}",
        bridge_urls=[f"http://127.0.0.1:{first_bridge + i}" for i in range(bridges)],
        log=log,
        env=env,
    )
    try:
        wait_http(f"{scaled.url}/ping", timeout, process, log)
        wait_http(f"{scaled.url}/", 60, process, log)
        yield scaled
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            scaled.stop()
        if process.poll() is None:  # it did not stop: do not leave it behind
            for child in scaled.launched():
                with contextlib.suppress(psutil.Error):
                    child.kill()
            process.kill()
            process.wait(10)
