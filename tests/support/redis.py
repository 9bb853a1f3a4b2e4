"""A throwaway redis-server for tests (`scripts/redis.sh`, Debian's redis-server, installed
if missing), or the one AGENT_CHAT_TEST_REDIS_URL names; and a unique key prefix per test,
so tests sharing one server never see each other's streams, leases or channels."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

from tests.support.processes import ROOT

TEST_REDIS_URL_ENV = "AGENT_CHAT_TEST_REDIS_URL"


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """The URL of a running redis-server, stopped (and `folder` deleted) at the end."""
    given = os.environ.get(TEST_REDIS_URL_ENV)
    if given:
        yield given
        return
    script = str(ROOT / "scripts" / "redis.sh")
    url = subprocess.run(
        [script, "start", str(folder)], check=True, capture_output=True, text=True, timeout=300
    ).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run([script, "stop", str(folder)], check=False, timeout=60)


def new_prefix() -> str:
    return f"test-{uuid4().hex[:12]}"


def start_redis_on(port: int | str, folder: Path) -> None:
    """A redis-server on this port (nothing persisted, files in `folder`), once it answers."""
    subprocess.run(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder),
         "--save", "", "--appendonly", "no", "--daemonize", "yes",
         "--pidfile", str(folder / "redis.pid"), "--logfile", str(folder / "server.log"),
         "--protected-mode", "yes"],
        check=True, timeout=30,
    )  # fmt: skip
    for _ in range(100):
        answer = subprocess.run(
            ["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True
        )
        if "PONG" in answer.stdout:
            return
        time.sleep(0.05)
    raise AssertionError("redis-server did not start")


def stop_redis_on(port: int | str) -> None:
    subprocess.run(
        ["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True, timeout=30
    )


def restart_redis(url: str, folder: Path, down_s: float = 1.0) -> None:
    """Restart the test Redis at `url` (started by `redis_server` in `folder`) on its port,
    empty, as a Redis without persistence comes back: every key, stream and record gone."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    stop_redis_on(port)
    time.sleep(down_s)
    start_redis_on(port, folder)
