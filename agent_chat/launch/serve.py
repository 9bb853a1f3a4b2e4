"""`python -m agent_chat.launch.serve`: start the bridge (unless one already answers) and the app.

The bridge is a separate process so that restarting the web app does not kill running
agents (docs/architecture.md §1); this launcher only saves typing two commands. With
`AGENT_CHAT_BRIDGE=embedded` the bridge runs inside the app (agent_chat/runs/embedded.py): only
the app is started, and there is no bridge to supervise.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import MutableMapping
from urllib.parse import urlparse

import httpx

from agent_chat.common.tool_profiles import exposure_problem
from agent_chat.config import PROJECT_ROOT, Settings, load_settings
from agent_chat.db import users
from agent_chat.launch.supervisor import BridgeSupervisor, bridge_healthy, bridge_refusal

log = logging.getLogger("agent_chat.launch.serve")


def bridge_token(environ: MutableMapping[str, str]) -> str:
    """The bridge's bearer token: the operator's `AGENT_CHAT_BRIDGE_TOKEN`, else a random one
    made now and put in `environ`, so only the app this launcher starts can use the bridge
    (any local program or web page could otherwise start runs and read the memory)."""
    token = environ.get("AGENT_CHAT_BRIDGE_TOKEN", "").strip()
    if not token:
        token = secrets.token_urlsafe(32)
        environ["AGENT_CHAT_BRIDGE_TOKEN"] = token
    return token


def start_bridge(url: str) -> subprocess.Popen | None:
    """Start a bridge on the host/port of `url`; None if our bridge already answers there
    (one that holds the token: another app's or a stranger's is refused)."""
    if bridge_healthy(url):
        refusal = bridge_refusal(url, os.environ["AGENT_CHAT_BRIDGE_TOKEN"])
        if refusal:
            raise SystemExit(
                f"something already answers at {url}, but {refusal}: stop it, or start this "
                "app with AGENT_CHAT_BRIDGE_TOKEN set to the token that bridge was given"
            )
        log.info("using the bridge already running at %s (not supervised here)", url)
        return None
    return spawn_bridge(url)


def spawn_bridge(url: str) -> subprocess.Popen:
    """A new bridge process on the host/port of `url`, once it answers (else SystemExit)."""
    parsed = urlparse(url)
    cmd = [sys.executable, "-m", "agent_chat.bridge", "--host", parsed.hostname or "127.0.0.1"]
    cmd += ["--port", str(parsed.port or 18731)]
    process = subprocess.Popen(cmd, cwd=PROJECT_ROOT)
    deadline = time.monotonic() + 90
    with httpx.Client() as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(
                    f"the bridge exited with code {process.returncode}; see its output above"
                )
            if bridge_healthy(url, http):
                # What answers may be a server that held the port before ours could bind it.
                refusal = bridge_refusal(url, os.environ["AGENT_CHAT_BRIDGE_TOKEN"])
                if refusal:
                    stop(process)
                    raise SystemExit(f"something else answers at {url}: {refusal}")
                log.info("bridge ready at %s (pid %d)", url, process.pid)
                return process
            time.sleep(0.5)
    stop(process)
    raise SystemExit(f"the bridge did not answer at {url} within 90 s")


def wait_until_serving(
    app: subprocess.Popen, url: str, timeout_s: float = 600, interval_s: float = 0.5
) -> bool:
    """Poll `url` until the process answers there (any status below 500); False if it exits
    or `timeout_s` passes. (The tests' launcher uses it too.)"""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=2) as client:  # one for every try (supervisor.bridge_healthy)
        while time.monotonic() < deadline:
            if app.poll() is not None:
                return False
            try:
                if client.get(url).status_code < 500:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(interval_s)
    return False


def stop(process: subprocess.Popen, timeout_s: float = 10) -> None:
    """Terminate `process`, and kill it if it is still there after `timeout_s` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def admin_known(settings: Settings) -> bool:
    """An administrator exists, or the start makes one (AGENT_CHAT_ADMIN_USER/_PASSWORD, an
    old install's AGENT_CHAT_PASSWORD): /setup is closed to a stranger. A database that
    cannot be read counts too: the app will not start on it either."""
    if settings.password or (settings.admin_user and settings.admin_password):
        return True
    return users.has_users_at(settings.db_url) is not False


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    # httpx logs every request at INFO: here only the readiness polls, which say nothing.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = load_settings()
    argv = sys.argv[1:] if argv is None else argv
    problem = exposure_problem(
        settings.tool_profiles, settings.app_host, admin_known=lambda: admin_known(settings)
    )
    if problem:
        raise SystemExit(problem)
    if "--scaled" in argv:  # PostgreSQL, Redis, several bridges and web workers (scaled.py)
        from agent_chat.launch import scaled

        scaled.main(argv, settings.app_port, settings.app_host)
    parser = argparse.ArgumentParser(description="Run Agent Chat: the bridge and the web app.")
    parser.add_argument("--port", type=int, default=settings.app_port, help="web app port")
    parser.add_argument("--env", default="prod", choices=["prod", "dev"])
    parser.add_argument(
        "--scaled", action="store_true", help="the scaled set-up (--scaled --help for more)"
    )
    args = parser.parse_args(argv)
    bridge, supervisor = None, None
    if settings.embedded_bridge:
        log.info("the bridge runs inside the web app (AGENT_CHAT_BRIDGE=embedded)")
    elif settings.bridge_urls:  # several bridges: each runs on its own, started by you
        log.info("several bridges (AGENT_CHAT_BRIDGE_URLS): %s", ", ".join(settings.bridge_urls))
    else:
        bridge_token(os.environ)  # before either process starts: both inherit it
        bridge = start_bridge(settings.bridge_url)
    if bridge is not None:
        supervisor = BridgeSupervisor(lambda: spawn_bridge(settings.bridge_url))
        supervisor.start(bridge)
    app_cmd = [sys.executable, "-m", "reflex", "run", "--env", args.env]
    app_cmd += ["--backend-host", settings.app_host]
    if args.env == "prod":
        app_cmd += [
            "--single-port",
            "--frontend-port",
            str(args.port),
            "--backend-port",
            str(args.port),
        ]
    else:
        app_cmd += ["--frontend-port", str(args.port)]
    app = subprocess.Popen(app_cmd, cwd=PROJECT_ROOT, env=os.environ.copy())

    def shutdown(signum: int, _frame: object) -> None:
        app.send_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, shutdown)
    # The address is announced once the app answers (after its build and its start-up, which
    # migrates the database), not while Reflex is still compiling.
    shown = "localhost" if settings.app_host == "127.0.0.1" else settings.app_host
    local = "127.0.0.1" if settings.app_host in ("0.0.0.0", "::", "") else settings.app_host
    # prod: one port, /ping is the backend's; dev: the page is Vite's, the backend elsewhere.
    host = f"[{local}]" if ":" in local else local
    probe = f"http://{host}:{args.port}" + ("/ping" if args.env == "prod" else "/")
    try:
        if wait_until_serving(app, probe):
            log.info("Agent Chat is ready: http://%s:%d", shown, args.port)
        code = app.wait()
    except KeyboardInterrupt:
        code = app.wait()
    finally:
        if supervisor is not None:
            bridge = supervisor.stop()
        if bridge is not None:
            stop(bridge)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
