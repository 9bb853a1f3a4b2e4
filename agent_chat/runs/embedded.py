"""`AGENT_CHAT_BRIDGE=embedded`: the bridge inside the web app's process.

For hosts that run one service (Reflex Cloud). It is the same bridge (`bridge/app.py`, the
same routes, token check and event buffers), called in-process: the app's `BridgeClient`
talks to it through `runs/asgi_stream.py`, an httpx transport with no socket, so the SSE
stream, `Last-Event-ID` and every error path are the ones of a bridge on its own, and
nothing is mounted on the public port. Its bearer token is random per process and never
put in the environment.

hermes is imported once at start, in a thread, with the app's own settings already read;
what hermes' `$HERMES_HOME/.env` (loaded with override=True) would change of the app's
variables is put back, and hermes' INFO chatter is kept off the console (it still reaches
`$HERMES_HOME/logs/agent.log`). The bridge's lifespan (its warm-up turn; stopping every run
at the end) is the web app's: `start()` from `services/runtime.py:start_services`, `stop()` from
`stop_services`. What is lost: a web restart stops the running agents (their answers end
FAILED at the next start, `runs/consumer.py:BRIDGE_RESTARTED`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import sys
import time
from dataclasses import replace
from typing import Any

from agent_chat.bridge.app import create_app
from agent_chat.bridge.console import QuietHermes
from agent_chat.bridge.malloc import limit_arenas
from agent_chat.bridge.settings import BridgeSettings, load_bridge_settings
from agent_chat.runs.asgi_stream import StreamingASGITransport
from agent_chat.runs.client import BridgeClient

log = logging.getLogger(__name__)

# The app's own variables: hermes' .env must not change them under the running app.
APP_VARIABLES = ("AGENT_CHAT_", "REFLEX_", "HERMES_HOME")
# Loggers of the app and of the servers it runs in: their INFO lines stay on the console.
OWN_LOGGERS = ("agent_chat", "reflex", "uvicorn", "granian", "alembic", "__main__")
BASE_URL = "http://127.0.0.1"  # any loopback name: the bridge's Host check allows it


def _app_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(APP_VARIABLES)}


def import_hermes() -> list[str]:
    """Import hermes now (it loads `$HERMES_HOME/.env`, attaches its log handler); put back
    any app variable that changed. Returns the names it put back."""
    quiet_hermes_on_console()  # before the import: it logs its plugins at INFO
    before = _app_variables()
    import run_agent  # noqa: F401  (after prepare_hermes_home: hermes fixes paths at import)

    after = _app_variables()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    for name in changed:
        if name in before:
            os.environ[name] = before[name]
        else:
            os.environ.pop(name, None)
    if changed:
        log.warning(
            "$HERMES_HOME/.env set %s; the web app keeps its own values", ", ".join(changed)
        )
    quiet_hermes_on_console()  # and any console handler hermes added
    return changed


def quiet_hermes_on_console() -> None:
    for handler in logging.getLogger().handlers:
        stream = getattr(handler, "stream", None)
        if stream in (sys.stdout, sys.stderr) and not any(
            isinstance(f, QuietHermes) for f in handler.filters
        ):
            handler.addFilter(QuietHermes(OWN_LOGGERS))


def _unfinished(counts: dict[str, int]) -> int:
    return counts.get("active_runs", 0) + counts.get("waiting_runs", 0)


class EmbeddedBridge:
    """The bridge app of this process and a client for it."""

    def __init__(self, settings: BridgeSettings | None = None) -> None:
        settings = settings or load_bridge_settings()
        # A random token per process, in no environment variable: the client is the only
        # holder (the check stays, as for a bridge on its own).
        self.settings = replace(settings, token=secrets.token_urlsafe(32))
        self.app = create_app(self.settings)  # prepares HERMES_HOME (before hermes loads)
        self._lifespan: contextlib.AbstractAsyncContextManager[Any] | None = None

    def client(self) -> BridgeClient:
        transport = StreamingASGITransport(self.app)
        return BridgeClient(BASE_URL, token=self.settings.token, transport=transport)

    async def start(self) -> None:
        started = time.perf_counter()
        limit_arenas()  # as the bridge process does, for the run threads to come
        await asyncio.to_thread(import_hermes)
        lifespan = self.app.router.lifespan_context(self.app)
        await lifespan.__aenter__()  # the warm-up turn starts in its thread
        self._lifespan = lifespan
        log.info("embedded bridge ready in %.1f s", time.perf_counter() - started)

    async def stop(self, wait_s: float = 5.0) -> None:
        """Stop every run (a waiting question is woken), give their threads `wait_s` to
        end, then give back the pooled agents' model clients."""
        if self._lifespan is None:
            return
        lifespan, self._lifespan = self._lifespan, None
        registry, pool = self.app.state.registry, self.app.state.pool
        running = _unfinished(registry.counts())
        await lifespan.__aexit__(None, None, None)  # registry.stop_all()
        deadline = time.monotonic() + wait_s
        while _unfinished(registry.counts()) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.1)  # run threads end on their own: nothing to wait on
        released = pool.drop_idle()
        log.log(
            logging.WARNING if running else logging.INFO,
            "embedded bridge stopped: %d running agent(s) stopped (their answers end FAILED "
            "at the next start), %d left running, %d pooled agent(s) released",
            running,
            _unfinished(registry.counts()),
            released,
        )
