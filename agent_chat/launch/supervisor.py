"""Keeps the bridge running under `./run.sh`: a bridge that exits or is killed is started
again, with a growing pause between attempts (1 s, 2 s, 4 s … 30 s; back to 1 s once one
has stayed up for a minute), and a log line each time. Not used with
`AGENT_CHAT_BRIDGE=embedded`: the bridge is part of the app then, and restarts with it.

Runs the bridge was serving end FAILED in the app with the restart sentence (their events
are gone with the process); the page's banner clears by itself once the new bridge answers
(runs/bridge_watch.py).
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from agent_chat.protocol.bridge_auth import proof_ok

log = logging.getLogger("agent_chat.launch.serve")


def bridge_healthy(url: str, http: httpx.Client | None = None) -> bool:
    """The bridge at `url` answers its /health (what every launcher waits for). A loop that
    asks again and again passes its one `http` client: a new client per call (`httpx.get`)
    loads the CA bundle each time, 48 ms of CPU against 0.3 ms (2-core test machine)."""
    get = httpx.get if http is None else http.get
    try:
        return get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def bridge_refusal(url: str, token: str) -> str | None:
    """Why the server answering at `url` is not a bridge to trust with `token` (None: it
    is): it must refuse a call without a token (401), prove it holds this token without
    being sent it (`GET /token-proof`, protocol/bridge_auth.py), and only then take it
    (200). Whatever else listens on the port never receives the token."""
    try:
        with httpx.Client(timeout=2) as http:
            if http.get(f"{url}/auth").status_code != 401:
                return "it answers without a token"
            nonce = secrets.token_hex(32)
            answer = http.get(f"{url}/token-proof", params={"nonce": nonce})
            proof = answer.json().get("proof") if answer.status_code == 200 else None
            if not proof_ok(token, nonce, proof):
                return "it does not hold this app's token"
            bearer = {"Authorization": f"Bearer {token}"}
            if http.get(f"{url}/auth", headers=bearer).status_code != 200:
                return "it refuses this app's token"
    except (httpx.HTTPError, ValueError, AttributeError):  # no answer, or not JSON / an object
        return "it does not answer as a bridge"
    return None


class BridgeSupervisor:
    def __init__(
        self,
        spawn: Callable[[], subprocess.Popen],
        *,
        first_pause_s: float = 1.0,
        longest_pause_s: float = 30.0,
        stable_s: float = 60.0,
    ) -> None:
        self._spawn = spawn  # starts a bridge and returns once it answers (or raises)
        self.first_pause_s = first_pause_s
        self.longest_pause_s = longest_pause_s
        self.stable_s = stable_s
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, process: subprocess.Popen) -> None:
        """Watch `process` (the bridge started by the launcher) from now on."""
        self.process = process
        self._thread = threading.Thread(target=self._watch, name="bridge-supervisor", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5) -> subprocess.Popen | None:
        """Stop watching; the caller stops the process returned (the current bridge).
        `timeout_s=0`: return at once (the watcher ends when that process does)."""
        self._stopping.set()
        if self._thread is not None and timeout_s > 0:
            self._thread.join(timeout=timeout_s)
        return self.process

    def _watch(self) -> None:
        pause = self.first_pause_s
        while not self._stopping.is_set():
            started = time.monotonic()
            assert self.process is not None
            code = self.process.wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= self.stable_s:
                pause = self.first_pause_s
            log.warning("the bridge exited (code %s); starting it again in %.0f s", code, pause)
            while not self._stopping.wait(pause):
                try:
                    self.process = self._spawn()
                except (SystemExit, OSError) as exc:
                    pause = min(pause * 2, self.longest_pause_s)
                    log.error("the bridge did not start (%s); next try in %.0f s", exc, pause)
                    continue
                self.restarts += 1
                log.info("the bridge is back (pid %d)", self.process.pid)
                pause = min(pause * 2, self.longest_pause_s)
                break


def respawn_failed_web_workers() -> None:
    """Granian replaces a web worker that dies (kill -9, out of memory, a crash at import)
    instead of stopping the whole server with it.

    Reflex 0.10.1 starts granian's `Server` without `respawn_failed_workers`
    (`reflex/utils/exec.py:run_granian_backend_prod`), so one dead worker stopped every
    tab and run. Reflex imports the app in granian's supervisor before it builds the server
    (`_preload_for_fork`, on Linux), and the app module calls this then: the server it
    builds next respawns failed workers, each of which runs the app's lifespan and takes
    over the runs whose lease expired (runs/takeover.py). The one place Reflex is bypassed
    for this (docs/architecture.md, "Several web workers")."""
    try:
        from granian.server import Server
    except ImportError:  # no granian: nothing to respawn
        return
    build = Server.__init__
    if getattr(build, "respawns", False):
        return

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("respawn_failed_workers", True)
        build(self, *args, **kwargs)

    __init__.respawns = True  # type: ignore[attr-defined]
    Server.__init__ = __init__  # type: ignore[method-assign]


def exit_with_supervisor(interval_s: float = 1.0, grace_s: float = 15.0) -> None:
    """In a web worker forked by granian's supervisor (its parent runs the same command
    line): end this worker when the supervisor is gone, e.g. killed with SIGKILL. Granian's
    workers do not notice by themselves; an orphan went on holding the port with its runs
    while `./run.sh` had stopped the bridge. SIGTERM first (the lifespan stops the
    services), then `_exit` after `grace_s`. Any other parent (a shell, a launcher) is left
    alone: a lone app process outlives its terminal as before. Linux (/proc) only."""
    parent = os.getppid()
    try:
        same = (
            Path(f"/proc/{parent}/cmdline").read_bytes() == Path("/proc/self/cmdline").read_bytes()
        )
    except OSError:
        return
    if not same:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        log.error("the web server's supervisor (pid %d) is gone: this worker stops", parent)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        os._exit(1)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()
