"""Two web app processes on two ports over one PostgreSQL and one Redis, for the benchmarks that
must know which worker consumes a run (cross_worker_latency.py, many_tabs.py).

Reflex's own several-worker mode (`GRANIAN_WORKERS`, what `./run.sh --scaled` runs) puts every
worker behind one port, so a browser cannot choose one; here each worker is its own process,
started as the test stacks start the app (tests/support/stack.py: the suite's one frontend
build, tests/support/builds.py, with this port written in, then uvicorn on the compiled app),
with the same `AGENT_CHAT_DB_URL`, `AGENT_CHAT_REDIS_URL` (run bus, leases) and
`REFLEX_REDIS_URL` (Reflex's states) as the scaled set-up's workers. PostgreSQL and Redis are
the launcher's own (agent_chat/launch/data_servers.py), in a temp folder; one bridge; the paced
benchmark model. The worker that starts a run takes its lease and consumes it: a run started
through worker A's HTTP API is consumed by A (checked from the lease's owner, `host:pid:…`).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import harness as h
import psutil
from redis import Redis

from agent_chat.db.engine import migrate
from agent_chat.launch.data_servers import Server, start_postgres, start_redis
from tests.support.builds import install_frontend
from tests.support.processes import start_process, stop_process, wait_http


@dataclass
class Workers:
    tmp: Path
    db_url: str
    redis_url: str
    bridge_url: str
    model_url: str
    app_urls: list[str] = field(default_factory=list)
    apps: list = field(default_factory=list)  # Popen per worker, same order as app_urls
    bridge: object = None
    model: object = None

    def consumer(self, run_id: str) -> int | None:
        """The index in `apps` of the worker holding the run's lease (None: no lease)."""
        client = Redis.from_url(f"{self.redis_url}/1", decode_responses=True)
        try:
            owner = client.get(f"agent_chat:run:{run_id}:lease")
        finally:
            client.close()
        if not owner:
            return None
        pid = int(owner.split(":")[1])
        for i, app in enumerate(self.apps):
            if pid == app.pid or pid in {c.pid for c in psutil.Process(app.pid).children(True)}:
                return i
        return None

    def app_cpu(self, i: int) -> float:
        return h.tree_cpu(self.apps[i].pid)


def _env(tmp: Path, model_url: str, extra: dict[str, str]) -> dict[str, str]:
    s = h.Stack(tmp=tmp, rate=0, db_url="")
    env = dict(s.env)
    for name in ("AGENT_CHAT_BRIDGE_TOKEN", "AGENT_CHAT_BRIDGE", "AGENT_CHAT_BRIDGE_URLS"):
        env.pop(name, None)
    env.update(
        {
            "AGENT_CHAT_MODEL_BASE_URL": f"{model_url}/v1",
            "AGENT_CHAT_TOOL_PROFILES": "chat",
            **extra,
        }
    )
    return env


@contextlib.contextmanager
def two_workers(rate: float, *, workers: int = 2, max_active_runs: int = 8) -> Iterator[Workers]:
    folder = Path(tempfile.mkdtemp(prefix="agent-chat-bench-2w-", dir="/tmp"))
    folder.chmod(0o755)  # PostgreSQL runs as `postgres` when we are root
    servers: list[Server] = []
    w = None
    try:
        pg, db_url = start_postgres(folder / "pg", h.free_port(), folder / "pg.log")
        servers.append(pg)
        migrate(db_url)  # before the workers start (they would wait for each other)
        redis, redis_url = start_redis(folder / "redis", h.free_port(), folder / "redis.log")
        servers.append(redis)
        model_port, bridge_port = h.free_port(), h.free_port()
        model_url = f"http://127.0.0.1:{model_port}"
        w = Workers(folder, db_url, redis_url, f"http://127.0.0.1:{bridge_port}", model_url)
        base = _env(
            folder,
            model_url,
            {
                "AGENT_CHAT_DB_URL": db_url,
                "AGENT_CHAT_REDIS_URL": f"{redis_url}/1",
                "REFLEX_REDIS_URL": f"{redis_url}/0",
                "AGENT_CHAT_BRIDGE_URL": w.bridge_url,
                "AGENT_CHAT_MAX_ACTIVE_RUNS": str(max_active_runs),
            },
        )
        h.log(f"model :{model_port} at {rate:g} chunks/s, bridge :{bridge_port}")
        w.model = start_process(
            [sys.executable, str(h.ROOT / "benchmarks/fake_model.py"), "--port", str(model_port)]
            + ["--rate", str(rate)],
            env=base,
            log=folder / "model.log",
            health=f"{model_url}/_bench/stats",
            timeout=60,
        )
        hermes = folder / "hermes"
        hermes.mkdir(exist_ok=True)
        (hermes / "config.yaml").write_text("agent:\n  api_max_retries: 1\n", encoding="utf-8")
        (folder / "skills").mkdir(exist_ok=True)
        w.bridge = start_process(
            [sys.executable, "-m", "agent_chat.bridge", "--port", str(bridge_port)]
            + ["--log-level", "warning"],
            env=base,
            log=folder / "bridge.log",
            health=f"{w.bridge_url}/health",
            timeout=120,
        )
        for i in range(workers):
            port = h.free_port()
            web = folder / f"web{i}"
            install_frontend(web, port, base)  # builds the suite's bundle the first time
            env = {
                **base,
                "REFLEX_WEB_WORKDIR": str(web),
                "REFLEX_STATES_WORKDIR": str(folder / f"states{i}"),
                "REFLEX_ENV_MODE": "prod",
                "__REFLEX_SKIP_COMPILE": "true",
                "__REFLEX_MOUNT_FRONTEND_COMPILED_APP": "true",
                "REFLEX_FRONTEND_PORT": str(port),
                "REFLEX_BACKEND_PORT": str(port),
            }
            cmd = [sys.executable, "-m", "uvicorn", "--factory", "agent_chat.agent_chat:app"]
            cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
            url = f"http://127.0.0.1:{port}"
            h.log(f"web worker {i} on :{port}")
            app = start_process(
                cmd, env=env, log=folder / f"app{i}.log", health=f"{url}/ping", timeout=300
            )
            w.apps.append(app)
            w.app_urls.append(url)
            wait_http(f"{url}/", 60, app, folder / f"app{i}.log")
        yield w
    finally:
        if w is not None:
            for app in w.apps:
                stop_process(app)
            stop_process(w.bridge)
            stop_process(w.model)
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
