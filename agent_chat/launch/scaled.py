"""`python -m agent_chat.launch.serve --scaled` (or `./run.sh --scaled`): the scaled set-up on one
machine, from one command.

Starts, in this order: PostgreSQL and Redis (agent_chat/launch/data_servers.py: Debian's servers,
data kept in `--data`, default `data/scaled/`), `--bridges` bridges (default 2, ports
`--bridge-port`, +1, …, one random bearer token for all, each kept running by a
`BridgeSupervisor`), and the web app with Reflex's several-worker mode: `reflex run --env
prod --single-port` with `REFLEX_REDIS_URL` (Reflex's Redis state manager) and
`GRANIAN_WORKERS=--web-workers` (default 2) on one port, `AGENT_CHAT_REDIS_URL` (run bus,
leases), `AGENT_CHAT_DB_URL` (PostgreSQL) and `AGENT_CHAT_BRIDGE_URLS`. It waits until the
app answers and prints its URL.

PostgreSQL or Redis exiting by itself (a crash, an out-of-memory kill) is started again on
the same data after a pause that grows (`Kept`), and the app reconnects; only one that keeps
exiting stops the set-up. A bridge is kept running by its `BridgeSupervisor`, a web worker by
granian (launch/supervisor.py).

Every child runs in a process group of its own: a Ctrl-C or SIGTERM reaches the launcher
only, which stops them in order (the app first, so that it writes what it has, then the
bridges, then Redis, which saves its file, then PostgreSQL) and kills any group that has not
ended after its grace period; nothing is left running, the data stays.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from agent_chat.config import DATA_DIR, PROJECT_ROOT
from agent_chat.launch.data_servers import (
    Server,
    port_free,
    spawn,
    start_postgres,
    start_redis,
    stop_group,
)
from agent_chat.launch.supervisor import BridgeSupervisor, bridge_healthy, bridge_refusal

log = logging.getLogger("agent_chat.launch.serve")
# What the launcher decides itself, whatever the caller's environment says.
_REPLACED = ("AGENT_CHAT_BRIDGE_URL", "AGENT_CHAT_BRIDGE_URLS", "AGENT_CHAT_DB_URL")


def parse(argv: list[str] | None, default_port: int) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m agent_chat.launch.serve --scaled",
        description="The scaled set-up on one machine: PostgreSQL, Redis, several bridges "
        "and several web workers.",
    )
    p.add_argument("--scaled", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=default_port, help="web app port (3000)")
    p.add_argument("--data", type=Path, default=DATA_DIR / "scaled", help="data folder")
    p.add_argument("--web-workers", type=int, default=2, help="Reflex backend workers (2)")
    p.add_argument("--bridges", type=int, default=2, help="bridge processes (2)")
    p.add_argument("--bridge-port", type=int, default=18741, help="first bridge's port")
    p.add_argument("--pg-port", type=int, default=15432, help="PostgreSQL port")
    p.add_argument("--redis-port", type=int, default=16379, help="Redis port")
    args = p.parse_args(argv)
    if args.web_workers < 1 or args.bridges < 1:
        p.error("--web-workers and --bridges need at least 1")
    args.data = args.data.resolve()
    return args


# A data server that exits by itself is started again after these pauses (systemd's
# Restart=on-failure with a growing delay); one more exit within RESTART_WINDOW_S of the
# last of them and the launcher gives up and stops everything.
RESTART_DELAYS_S = (1.0, 2.0, 5.0, 10.0, 30.0)
RESTART_WINDOW_S = 300.0


@dataclass
class Kept:
    """PostgreSQL or Redis, kept running: `start` makes a new server on the same data and
    port. The app's connections come back by themselves (SQLAlchemy's pre-ping, the run
    bus's and Reflex's Redis clients; runs/redis_watch.py when Redis lost its data)."""

    server: Server
    start: Callable[[], Server]
    restarts: list[float] = field(default_factory=list)  # monotonic times, the recent ones

    def check(self, stopping: threading.Event) -> bool:
        """False when it has exited too often to try again."""
        if self.server.alive():
            return True
        name, code = self.server.name, self.server.process.returncode
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW_S]
        if len(self.restarts) >= len(RESTART_DELAYS_S):
            log.error(
                "%s exited (code %s), the %d. time within %.0f s: giving up",
                name, code, len(self.restarts) + 1, RESTART_WINDOW_S,
            )  # fmt: skip
            return False
        delay = RESTART_DELAYS_S[len(self.restarts)]
        log.error(
            "%s exited (code %s): starting it again in %.0f s (restart %d of at most %d "
            "within %.0f s)",
            name, code, delay, len(self.restarts) + 1, len(RESTART_DELAYS_S), RESTART_WINDOW_S,
        )  # fmt: skip
        stop_group(self.server.process, signal.SIGKILL, 5)  # what it left (PostgreSQL's backends)
        if stopping.wait(delay):
            return True
        self.restarts.append(time.monotonic())
        try:
            self.server = self.start()
        except SystemExit as exc:  # the start functions say why this way
            log.error("%s did not start again: %s", name, exc)
            return True  # still dead: the next check counts another restart
        log.info("%s is running again (pid %d)", name, self.server.process.pid)
        return True


@dataclass
class Scaled:
    """Everything the launcher started, stopped in reverse order by `stop()`."""

    data: Path
    servers: list[Kept] = field(default_factory=list)  # PostgreSQL, Redis
    bridges: list[BridgeSupervisor] = field(default_factory=list)
    starting: list[subprocess.Popen] = field(default_factory=list)  # bridges not yet answering
    app: subprocess.Popen | None = None

    def stop(self) -> None:
        if self.app is not None:
            log.info("stopping the web app")
            stop_group(self.app, signal.SIGINT, 30)
        for supervisor in self.bridges:
            process = supervisor.stop(timeout_s=0)
            if process is not None:
                stop_group(process, signal.SIGTERM, 15)
        for process in self.starting:
            stop_group(process, signal.SIGTERM, 15)
        for kept in reversed(self.servers):
            log.info("stopping %s", kept.server.name)
            kept.server.stop()
        log.info("stopped; the data stays in %s", self.data)


def bridge_command(port: int) -> list[str]:
    return [sys.executable, "-m", "agent_chat.bridge", "--host", "127.0.0.1", "--port", str(port)]


def wait_bridge(
    port: int, process: subprocess.Popen, stopping: threading.Event | None, token: str
) -> None:
    """Until the bridge `process` answers on `port` (SystemExit if it exits, or after 120 s,
    or when what answers does not hold `token`: a server that had the port first; the
    caller stops it)."""
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    with httpx.Client() as http:
        while not bridge_healthy(url, http):
            if process.poll() is not None:
                raise SystemExit(f"the bridge on :{port} exited with code {process.returncode}")
            if stopping is not None and stopping.is_set():
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"the bridge did not answer at {url} within 120 s")
            time.sleep(0.3)
    refusal = bridge_refusal(url, token)
    if refusal and not (stopping is not None and stopping.is_set()):
        raise SystemExit(f"something else answers at {url}: {refusal}")
    log.info("bridge ready at %s (pid %d)", url, process.pid)


def spawn_bridge(port: int, env: dict[str, str]) -> subprocess.Popen:
    """A new bridge on 127.0.0.1:`port` in its own process group, once it answers (what the
    supervisor starts when one exits)."""
    process = spawn(bridge_command(port), None, env=env, cwd=str(PROJECT_ROOT))
    try:
        wait_bridge(port, process, None, env["AGENT_CHAT_BRIDGE_TOKEN"])
    except SystemExit:
        stop_group(process, signal.SIGTERM, 10)
        raise
    return process


@contextlib.contextmanager
def data_lock(data: Path) -> Iterator[None]:
    """One launcher per data folder (PostgreSQL's own lock would say so later and less
    clearly)."""
    data.mkdir(parents=True, exist_ok=True)
    with (data / "launcher.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"another scaled launcher uses {data}") from None
        yield


def app_command(port: int, host: str) -> list[str]:
    cmd = [sys.executable, "-m", "reflex", "run", "--env", "prod", "--single-port"]
    return cmd + ["--frontend-port", str(port), "--backend-port", str(port), "--backend-host", host]


def needs_setup(url: str) -> bool:
    """No account yet: the app serves its first-administrator form at /setup (404 after)."""
    try:
        return httpx.get(f"{url}/setup", timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


def run(args: argparse.Namespace, app_host: str) -> int:
    if os.environ.get("AGENT_CHAT_BRIDGE", "").strip().lower() == "embedded":
        raise SystemExit("--scaled runs bridges of their own: unset AGENT_CHAT_BRIDGE=embedded")
    ports = [args.port, *(args.bridge_port + i for i in range(args.bridges))]
    busy = [p for p in ports if not port_free(p, "127.0.0.1")]
    if busy:
        raise SystemExit(f"port(s) {', '.join(map(str, busy))} in use: choose others")
    stopping = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %d: stopping everything", signum)
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    data, root = args.data, str(PROJECT_ROOT)
    logs = data / "logs"
    scaled = Scaled(data)
    code = 1
    try:

        def postgres() -> tuple[Server, str]:
            return start_postgres(data / "postgres", args.pg_port, logs / "postgresql.log")

        def redis() -> tuple[Server, str]:
            return start_redis(data / "redis", args.redis_port, logs / "redis.log")

        pg, db_url = postgres()
        scaled.servers.append(Kept(pg, lambda: postgres()[0]))
        kept_redis, redis_url = redis()
        scaled.servers.append(Kept(kept_redis, lambda: redis()[0]))
        env = {k: v for k, v in os.environ.items() if k not in _REPLACED}
        env.setdefault("HERMES_HOME", str(data / "hermes"))
        env.setdefault("AGENT_CHAT_WORKSPACES_DIR", str(data / "workspaces"))
        if not env.get("AGENT_CHAT_BRIDGE_TOKEN", "").strip():
            env["AGENT_CHAT_BRIDGE_TOKEN"] = secrets.token_urlsafe(32)  # only our app gets it
        urls = [f"http://127.0.0.1:{p}" for p in ports[1:]]
        # The bridges and the app start at once (the app's first build takes a minute);
        # the app does not need them to answer yet (runs/bridge_watch.py polls them).
        bridge_env = dict(env)
        starting = [
            (port, spawn(bridge_command(port), None, env=bridge_env, cwd=root))
            for port in ports[1:]
        ]
        scaled.starting = [process for _, process in starting]
        env.update(
            {
                "AGENT_CHAT_DB_URL": db_url,
                "AGENT_CHAT_REDIS_URL": f"{redis_url}/1",  # the run bus, leases, states
                "REFLEX_REDIS_URL": f"{redis_url}/0",  # Reflex's state manager
                "GRANIAN_WORKERS": str(args.web_workers),
                "AGENT_CHAT_BRIDGE_URLS": ",".join(urls),
            }
        )
        log.info("web app: %d workers on :%d, bridges %s", args.web_workers, args.port, urls)
        scaled.app = spawn(app_command(args.port, app_host), None, env=env, cwd=root)
        for port, process in starting:
            wait_bridge(port, process, stopping, env["AGENT_CHAT_BRIDGE_TOKEN"])
            if stopping.is_set():
                break
            supervisor = BridgeSupervisor(lambda port=port: spawn_bridge(port, bridge_env))
            supervisor.start(process)
            scaled.bridges.append(supervisor)
            scaled.starting.remove(process)
        code = watch(scaled, args, app_host, stopping)
    finally:
        scaled.stop()
    return code


def watch(
    scaled: Scaled, args: argparse.Namespace, app_host: str, stopping: threading.Event
) -> int:
    """Announce the app once it answers; then wait for a signal or for the app to end by
    itself (then everything stops). PostgreSQL or Redis ending by itself is started again
    (`Kept`); everything stops when one keeps ending."""
    local = "127.0.0.1" if app_host in ("0.0.0.0", "::", "") else app_host
    host = f"[{local}]" if ":" in local else local
    url = f"http://{host}:{args.port}"
    shown = f"http://{'localhost' if app_host == '127.0.0.1' else app_host}:{args.port}"
    announced = False
    deadline = time.monotonic() + 900  # the first start builds the frontend
    while not stopping.wait(0.5):
        if scaled.app is None or scaled.app.poll() is not None:
            log.error(
                "the web app exited (code %s)",
                None if scaled.app is None else scaled.app.returncode,
            )
            return 1
        for kept in scaled.servers:
            if not kept.check(stopping):
                return 1
        if not announced:
            with contextlib.suppress(httpx.HTTPError):
                announced = httpx.get(f"{url}/ping", timeout=2).status_code < 500
            if announced:
                log.info(
                    "Agent Chat (scaled: %d web workers, %d bridges) is ready: %s",
                    args.web_workers,
                    len(scaled.bridges),
                    shown,
                )
                if needs_setup(url):
                    log.info(
                        "no account yet: open %s/setup to create the first administrator "
                        "(or start with AGENT_CHAT_ADMIN_USER and AGENT_CHAT_ADMIN_PASSWORD)",
                        shown,
                    )
            elif time.monotonic() > deadline:
                log.error("the web app did not answer at %s within 15 min", url)
                return 1
    return 0


def main(argv: list[str] | None, default_port: int, app_host: str) -> None:
    args = parse(argv, default_port)
    with data_lock(args.data):
        raise SystemExit(run(args, app_host))
