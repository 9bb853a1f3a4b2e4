"""`python -m agent_chat.launch.serve --scaled` for real: PostgreSQL and Redis (Debian's, data in a
folder), two bridges, two Reflex web workers on one port. A chat through the HTTP API is
answered; a Workspace command reaches no bridge's or app's environment and not Redis;
SIGTERM stops every process it started (exit code 0); the data folder keeps the
conversation (its PostgreSQL cluster started again has it)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import httpx
import psutil
from sqlalchemy import text

from agent_chat.auth import COOKIE_NAME
from agent_chat.db.engine import make_engine
from agent_chat.launch.data_servers import start_postgres
from tests.fakes.model_server import running_fake_model
from tests.support.accounts import ADMIN_PASSWORD, session_cookie
from tests.support.api import ask, new_session, read_stream, start_run
from tests.support.processes import free_port
from tests.support.scaled import running_scaled, scaled_env
from tests.support.secrets import reveals


def _environ(process: psutil.Process) -> dict[str, str]:
    return process.environ()


def _gone(processes: list[psutil.Process], timeout: float = 10) -> list[psutil.Process]:
    """The processes of `processes` still running after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for p in processes:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def test_scaled_setup_answers_stops_cleanly_and_keeps_its_data(tmp_path: Path) -> None:
    # As root PostgreSQL runs as `postgres`, which cannot enter pytest's folder (mode 0700).
    data = Path(tempfile.mkdtemp(prefix="agent-chat-scaled-", dir="/tmp"))
    data.chmod(0o755)
    try:
        _answers_stops_and_keeps(tmp_path, data / "data")
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _workspace_reaches_nothing(
    client: httpx.Client, scaled, app_env: dict[str, str], token: str
) -> None:
    """A Workspace command on a scaled bridge: the bridges' and the app's
    environment (bridge token, administrator password) and the Redis of the run events
    are out of its reach."""
    redis_port = app_env["AGENT_CHAT_REDIS_URL"].rsplit(":", 1)[1].split("/")[0]
    pids = [b.pid for b in scaled.bridges()] + [scaled.app().pid]
    commands = [f"cat /proc/{pid}/environ | base64 -w0" for pid in pids]
    commands.append(f"(echo > /dev/tcp/127.0.0.1/{redis_port}) && echo redis-answered")
    calls = "\n".join(f"CALL terminal {json.dumps({'command': c})}" for c in commands)
    session = new_session(client)
    run = start_run(client, session, f"look around\n{calls}", tool_profile="workspace")
    read = read_stream(client, run["runId"])
    assert read.last().type == "run_completed", read.types()
    shown = "\n".join(e.data["result"] for e in read.events if e.type == "tool_end")
    assert shown.count("No such file") == len(pids) and "redis-answered" not in shown, shown
    assert not reveals(shown, token) and not reveals(shown, ADMIN_PASSWORD), shown


def _server(scaled, name: str) -> psutil.Process:
    """The launched process called `name` whose parent is not one of that name (PostgreSQL's
    postmaster, not its backends)."""
    found = []
    for p in scaled.launched():
        try:
            if p.name() == name and (p.parent() is None or p.parent().name() != name):
                found.append(p)
        except psutil.NoSuchProcess:
            continue
    assert len(found) == 1, found
    return found[0]


def _data_servers_come_back(client: httpx.Client, scaled) -> None:
    """kill -9 of PostgreSQL in the middle of an answer, then of Redis: the launcher starts
    each again (its log says so), the answer completes with every word once, and the app
    answers the next message; nothing else stopped."""
    session_id = new_session(client)
    run = start_run(client, session_id, "long 120 delay=0.05")
    time.sleep(1.5)  # words are streaming (and being stored)
    for name in ("postgres", "redis-server"):
        old = _server(scaled, name)
        old.kill()
        deadline = time.monotonic() + 60
        while True:
            try:
                new = _server(scaled, name)
                if new.pid != old.pid:
                    break
            except (AssertionError, psutil.NoSuchProcess):
                pass
            assert time.monotonic() < deadline, scaled.log.read_text()[-3000:]
            time.sleep(0.3)
    read = read_stream(client, run["runId"])
    assert read.last().type == "run_completed", read.types()
    assert read.text().split() == [f"word{i}" for i in range(1, 121)]
    deadline = time.monotonic() + 60
    while True:  # the stored answer: the database's part of the run
        messages = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
        answer = [m for m in messages if m["role"] == "ASSISTANT"][-1]
        if answer["status"] != "RUNNING" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert answer["status"] == "SUCCESS" and answer["content"].split()[-1] == "word120"
    logged = scaled.log.read_text()
    for name in ("postgresql", "redis"):  # as root PostgreSQL runs under runuser: code 137
        assert re.search(rf"{name} exited \(code (-9|137)\): starting it again in 1 s", logged)
    _, again = ask(client, new_session(client), "hello after the restarts")
    assert again.last().type == "run_completed" and again.text() == "Echo: hello after the restarts"


def _answers_stops_and_keeps(tmp_path: Path, data: Path) -> None:
    with running_fake_model(0.0) as fake:
        env = scaled_env(tmp_path, fake.base_url, {"AGENT_CHAT_TOOL_PROFILES": "chat,workspace"})
        with running_scaled(tmp_path, env, data=data) as scaled:
            # What runs: two bridges (one token), two web workers behind one port.
            bridges = scaled.bridges()
            assert len(bridges) == 2, [p.cmdline() for p in scaled.launched()]
            for url in scaled.bridge_urls:
                assert httpx.get(f"{url}/health", timeout=10).status_code == 200
            tokens = {_environ(b)["AGENT_CHAT_BRIDGE_TOKEN"] for b in bridges}
            assert len(tokens) == 1 and len(next(iter(tokens))) >= 32
            for url in scaled.bridge_urls:  # no token, no run
                assert httpx.get(f"{url}/runs/-", timeout=10).status_code == 401
            workers = scaled.web_workers()
            assert len(workers) == 2, [p.cmdline() for p in scaled.app().children()]
            app_env = _environ(scaled.app())
            assert app_env["GRANIAN_WORKERS"] == "2"
            assert app_env["REFLEX_REDIS_URL"].startswith("redis://127.0.0.1:")
            assert app_env["AGENT_CHAT_REDIS_URL"].startswith("redis://127.0.0.1:")
            assert app_env["AGENT_CHAT_DB_URL"].startswith("postgresql+psycopg://")
            assert app_env["AGENT_CHAT_BRIDGE_URLS"] == ",".join(scaled.bridge_urls)
            assert app_env["AGENT_CHAT_BRIDGE_TOKEN"] in tokens

            # A chat through the HTTP API, signed in over the login API.
            cookie = session_cookie(scaled.url)
            headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
            with httpx.Client(base_url=scaled.url, headers=headers, timeout=60) as client:
                session_id = new_session(client)
                run, read = ask(client, session_id, "hello scaled world")
                assert read.status == 200
                assert read.last().type == "run_completed", read.types()
                assert read.text() == "Echo: hello scaled world"
                messages = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
                answer = [m for m in messages if m["role"] == "ASSISTANT"][-1]
                assert answer["status"] == "SUCCESS"
                assert answer["content"] == "Echo: hello scaled world"
                _workspace_reaches_nothing(client, scaled, app_env, next(iter(tokens)))
                _data_servers_come_back(client, scaled)
            started = scaled.launched()
            assert len(started) >= 7  # postgres (runuser + server), redis, 2 bridges, app + 2
            code = scaled.stop()
        assert code == 0, scaled.log.read_text()[-3000:]
        left = _gone(started)
        assert not left, [p.cmdline() for p in left]
        for url in [scaled.url, *scaled.bridge_urls]:
            try:
                httpx.get(f"{url}/health", timeout=2)
            except httpx.ConnectError:
                continue
            raise AssertionError(f"{url} still answers after the launcher stopped")

        # The data stays: the kept cluster starts again with the conversation in it (the
        # launcher starts it this way; a whole second launch would add two minutes of build).
        assert (data / "redis" / "dump.rdb").exists()  # Redis saved at shutdown
        server, db_url = start_postgres(data / "postgres", free_port(), tmp_path / "pg.log")
        try:
            engine = make_engine(db_url)
            try:
                with engine.connect() as connection:
                    stored = connection.execute(
                        text("SELECT content FROM chat_message WHERE role = 'ASSISTANT'")
                    ).scalars()
                    assert "Echo: hello scaled world" in list(stored)
            finally:
                engine.dispose()
        finally:
            server.stop()
        assert not server.alive()
