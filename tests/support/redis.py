"""A throwaway redis-server for tests (`scripts/redis.sh`, Debian's redis-server, installed
if missing), or the one AGENT_CHAT_TEST_REDIS_URL names; and a unique key prefix per test,
so tests sharing one server never see each other's streams, leases or channels."""

from __future__ import annotations

import contextlib
import os
import subprocess
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
