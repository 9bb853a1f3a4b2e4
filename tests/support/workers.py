"""Several web workers for browser tests: one PostgreSQL database, one
redis-server (Reflex's state manager and token manager through REFLEX_REDIS_URL, the run
bus and leases through AGENT_CHAT_REDIS_URL), one fake model and bridge(s), and

- `two_workers`: two app processes on two ports (workers A and B), each serving its own copy
  of the frontend build for its port (tests/support/builds.py), so a test decides which
  worker each browser tab talks to and can `kill -9` one of them;
- `reflex_workers`: one port served by Reflex's own several workers (GRANIAN_WORKERS, as
  `reflex run --env prod` runs them: tests/support/reflex_workers.py).

PostgreSQL always (several processes writing at once): AGENT_CHAT_TEST_DB_URL's server, or
a throwaway one (scripts/postgres.sh) when the suite runs on SQLite or the file runs alone.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from tests.fakes.model_server import free_port
from tests.support.databases import TEST_DB_URL_ENV, database_server_url
from tests.support.processes import ROOT, descendants
from tests.support.redis import redis_server
from tests.support.stack import Stack, running_stack

LEASE_S = 5.0  # the default; a dead worker's runs are taken over after it (a shorter one lapses
# when this shared 2-core machine stalls a worker for a second or two: a takeover nobody asked for)


@contextlib.contextmanager
def postgresql_for_tests() -> Iterator[None]:
    """AGENT_CHAT_TEST_DB_URL names a PostgreSQL server for the block: the one given, or a
    throwaway server started here (and stopped after)."""
    if database_server_url() is not None:
        yield
        return
    # Not under pytest's tmp: as root that is closed to the `postgres` user the server runs as.
    folder = Path(tempfile.mkdtemp(prefix="agent-chat-pg-"))
    script = str(ROOT / "scripts" / "postgres.sh")
    url = subprocess.run(
        [script, "start", str(folder)], check=True, capture_output=True, text=True, timeout=300
    ).stdout.strip()
    os.environ[TEST_DB_URL_ENV] = url
    try:
        yield
    finally:
        os.environ.pop(TEST_DB_URL_ENV, None)
        subprocess.run([script, "stop", str(folder)], check=False, timeout=60)


def shared_env(redis_url: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """What every worker gets: the Redis for Reflex and for the runs, a short lease."""
    return {
        "REFLEX_REDIS_URL": redis_url,
        "AGENT_CHAT_REDIS_URL": redis_url,
        "AGENT_CHAT_REDIS_LEASE_S": str(LEASE_S),
        **(env or {}),
    }


@dataclass
class TwoWorkers:
    """Worker A is the stack (fake model, bridge, app); worker B another app process on the
    same database, Redis and bridges, its own port and frontend copy."""

    a: Stack
    b: Stack
    redis_url: str

    def kill(self, worker: Stack) -> None:
        """`kill -9` of a worker's app process (nothing cleaned up, as a crash)."""
        assert worker.app is not None
        worker.app.send_signal(signal.SIGKILL)
        worker.app.wait(10)
        worker.app = None

    def restart(self, worker: Stack) -> None:
        if worker.app is None or worker.app.poll() is not None:
            worker.start_app()


def another_worker(stack: Stack, tmp: Path) -> Stack:
    """A second app process of `stack` (not started): its own port, build and state folders,
    the same settings (database, Redis, bridges, model) and the same administrator."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = {
        **stack.env,
        "REFLEX_WEB_WORKDIR": str(tmp / "web"),
        "REFLEX_STATES_WORKDIR": str(tmp / "states"),
    }
    worker = replace(stack, tmp=tmp, env=env, app_port=free_port(), bridge=None, app=None)
    worker.built = False
    worker._cookie = stack.session_cookie  # the stored session serves every worker
    return worker


@contextlib.contextmanager
def two_workers(
    tmp: Path,
    *,
    token_delay: float,
    env: dict[str, str] | None = None,
    bridges_also: list[str] | None = None,
) -> Iterator[TwoWorkers]:
    with contextlib.ExitStack() as started:
        started.enter_context(postgresql_for_tests())
        redis_url = started.enter_context(redis_server(tmp / "redis"))
        a = started.enter_context(
            running_stack(
                tmp / "a",
                token_delay=token_delay,
                env=shared_env(redis_url, env),
                bridges_also=bridges_also,
            )
        )
        b = another_worker(a, tmp / "b")
        started.callback(b.stop_app)
        b.start_app()
        yield TwoWorkers(a, b, redis_url)


@contextlib.contextmanager
def reflex_workers(
    tmp: Path, *, token_delay: float, workers: int = 2, env: dict[str, str] | None = None
) -> Iterator[Stack]:
    """One port, `workers` Reflex backend workers (granian), all started at once on a
    fresh database."""
    with contextlib.ExitStack() as started:
        started.enter_context(postgresql_for_tests())
        redis_url = started.enter_context(redis_server(tmp / "redis"))
        env = shared_env(redis_url, env)
        yield started.enter_context(
            running_stack(tmp / "app", token_delay=token_delay, env=env, workers=workers)
        )


def worker_pids(stack: Stack) -> list[int]:
    """The worker processes below the stack's app process (granian's workers)."""
    assert stack.app is not None
    return descendants(stack.app.pid)


def socket_instance(redis_url: str, token: str) -> str | None:
    """Which worker (Reflex's token manager instance id) holds the tab's socket, as Reflex's
    RedisTokenManager stores it (`token_manager_socket_record_<token>`, a pickled record)."""
    from redis import Redis

    with Redis.from_url(redis_url) as client:
        raw = client.get(f"token_manager_socket_record_{token}")
    return pickle.loads(raw).instance_id if raw else None  # noqa: S301 (Reflex's own record)
