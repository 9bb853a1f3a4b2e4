"""MCP servers for the agents, through hermes' own MCP client (`tools/mcp_tool.py`).

The app keeps the servers in its database and sends the ones a run may use with the run (and
with a prepare), so every bridge gets the same servers and a change reaches the next run
without a restart. hermes keeps one connection per server name for the process, its tools
registered as the toolset `mcp-<name>`; an agent gets a server's tools by having that toolset
enabled, so connecting a server gives no other agent its tools. A server whose settings
changed (its fingerprint) is disconnected and connected again before the next agent is built.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_chat.bridge.schemas import McpServerSpec

logger = logging.getLogger(__name__)

# How much of a failed server's stderr a test shows (hermes writes every stdio server's
# stderr into one log file, `logs/mcp-stderr.log` of its home).
STDERR_TAIL_CHARS = 1500

# A server that failed to connect is not tried again with the same settings for this long:
# hermes tries a failing start three times with backoff (~7 s), which every run would wait.
RETRY_AFTER_S = 60.0

_lock = threading.Lock()
_fingerprints: dict[str, str] = {}  # connected server name → the spec it was connected with
_failed: dict[str, tuple[str, float, str]] = {}  # name → (fingerprint, when, why)


def toolset(name: str) -> str:
    return f"mcp-{name}"


def connect(specs: Iterable[McpServerSpec]) -> dict[str, str]:
    """Connect the servers not connected yet (or connected with other settings) and return
    the problems of those that could not be, by name; the connected ones' toolsets are then
    `toolset(name)`. Blocks while connecting (each at most its connect timeout)."""
    import tools.mcp_tool as mcp

    from agent_chat.bridge import mcp_blobs, mcp_consent, mcp_images

    specs = list(specs)
    mcp_consent.install()  # before any handler is made
    mcp_images.install()
    mcp_blobs.install()
    for spec in specs:
        mcp_consent.set_asking(spec.name, spec.ask)
    with _lock:
        # Only what is not connected with these settings is checked and connected: a run's
        # agent build must not pay a probe for servers that are up.
        fresh = [
            s
            for s in specs
            if _fingerprints.get(s.name) != s.fingerprint() or not _connected(mcp, s.name)
        ]
        problems = {s.name: why for s in fresh if (why := _recent_failure(s) or cannot_start(s))}
        wanted = [s for s in fresh if s.name not in problems]
        for spec in wanted:
            if _fingerprints.get(spec.name) not in (None, spec.fingerprint()):
                _disconnect(mcp, spec.name)
        if wanted:
            mcp.register_mcp_servers({s.name: s.hermes_config() for s in wanted})
        for spec in wanted:
            if _connected(mcp, spec.name):
                _fingerprints[spec.name] = spec.fingerprint()
                _failed.pop(spec.name, None)
            else:
                _fingerprints.pop(spec.name, None)
                problems[spec.name] = _connect_error(mcp, spec.name)
                _failed[spec.name] = (spec.fingerprint(), time.monotonic(), problems[spec.name])
        return problems


def _recent_failure(spec: McpServerSpec) -> str | None:
    failed = _failed.get(spec.name)
    if failed is None or failed[0] != spec.fingerprint():
        return None
    ago = time.monotonic() - failed[1]
    if ago >= RETRY_AFTER_S:
        return None
    return f"{failed[2]} (tried {ago:.0f} s ago; tried again after {RETRY_AFTER_S:.0f} s)"


def connected_toolsets(specs: Iterable[McpServerSpec]) -> tuple[list[str], dict[str, str]]:
    """Connect `specs` and say which toolsets an agent gets and why the others are missing."""
    specs = list(specs)
    if not specs:
        return [], {}
    problems = connect(specs)
    return [toolset(s.name) for s in specs if s.name not in problems], problems


def cannot_start(spec: McpServerSpec) -> str | None:
    """Why a server cannot be reached at all, found before hermes tries (it would see a
    closed pipe or keep retrying with backoff until the timeout), or None."""
    return _unreachable(spec) if spec.transport == "http" else _missing_command(spec)


def _unreachable(spec: McpServerSpec) -> str | None:
    parts = urlsplit(spec.url or "")
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=min(5.0, spec.connect_timeout)).close()
    except ConnectionRefusedError:
        return f"Connection refused: nothing answers at {host}:{port}."
    except socket.gaierror:
        return f"Unknown host {host!r}."
    except OSError as exc:
        return f"Cannot reach {host}:{port}: {exc.strerror or exc}."
    return None


def _missing_command(spec: McpServerSpec) -> str | None:
    if not spec.command:
        return None
    path = spec.env.get("PATH", os.environ.get("PATH", ""))
    if shutil.which(spec.command, path=path):
        return None
    return f"Command not found: {spec.command!r} is not an executable file or on PATH."


def status() -> list[dict[str, object]]:
    """Each server this bridge connected or tried: connected, its tools, the last error."""
    import tools.mcp_tool as mcp

    with mcp._lock:
        servers = dict(mcp._servers)
        errors = dict(mcp._server_connect_errors)
    rows: list[dict[str, object]] = []
    for name in sorted(set(servers) | set(errors)):
        if name.startswith(_TEST_PREFIX):
            continue
        server = servers.get(name)
        live = server is not None and getattr(server, "session", None) is not None
        rows.append(
            {
                "name": name,
                "connected": live,
                "tools": len(getattr(server, "_registered_tool_names", []) or []) if live else 0,
                "error": None if live else errors.get(name, "not connected"),
            }
        )
    return rows


_TEST_PREFIX = "agent-chat-test-"


def test(spec: McpServerSpec) -> dict[str, object]:
    """Connect to `spec` as a throw-away session, list its tools and disconnect: `{ok, tools:
    [{name, description}], error, seconds}`. Nothing is registered, so no agent sees it."""
    import tools.mcp_tool as mcp

    name = f"{_TEST_PREFIX}{uuid.uuid4().hex[:8]}"
    config = spec.hermes_config()
    started = time.monotonic()
    if why := cannot_start(spec):
        return {"ok": False, "tools": [], "error": why, "seconds": _since(started)}
    mcp._ensure_mcp_loop()
    server: Any = None

    async def attempt() -> Any:
        import asyncio

        async with asyncio.timeout(spec.connect_timeout):
            return await mcp._connect_server(name, config)

    try:
        server = mcp._run_on_mcp_loop(attempt, timeout=spec.connect_timeout + 5)
        tools = [
            {"name": t.name, "description": (t.description or "").strip()[:500]}
            for t in (server._tools or [])
        ]
        return {"ok": True, "tools": tools, "error": None, "seconds": _since(started)}
    except BaseException as exc:  # noqa: BLE001 - every failure is the test's answer
        return {
            "ok": False,
            "tools": [],
            "error": _test_error(mcp, spec, name, exc),
            "seconds": _since(started),
        }
    finally:
        if server is not None:
            try:
                mcp._run_on_mcp_loop(server.shutdown, timeout=15)
            except Exception:  # a server that will not stop must not fail the test's answer
                logger.warning("MCP test: %s did not shut down cleanly", spec.name)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


def _test_error(mcp: Any, spec: McpServerSpec, name: str, exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        message = f"No answer within {spec.connect_timeout:g} s (timed out)."
    else:
        message = mcp._format_connect_error(exc)
        lowered = message.lower()
        if "401" in message or "unauthorized" in lowered:
            message = f"Unauthorised: the server refused the credentials ({message})."
        elif "connection refused" in lowered or "connecterror" in lowered:
            message = f"Connection refused: nothing answers at {spec.url} ({message})."
    if spec.transport == "stdio":
        tail = _stderr_tail(mcp, name)
        if tail:
            message += f"\nIts stderr:\n{tail}"
    return message


def _stderr_tail(mcp: Any, name: str) -> str:
    """What the test's server wrote to stderr (after hermes' header line for it), from the
    log file hermes opened once for the process."""
    handle = getattr(mcp, "_mcp_stderr_log_fh", None)
    try:
        text = Path(handle.name).read_text(encoding="utf-8", errors="replace")
    except (AttributeError, OSError, TypeError):
        return ""
    marker = f"starting MCP server '{name}' ====="
    at = text.rfind(marker)
    if at < 0:
        return ""
    body = text[at + len(marker) :]
    following = body.find("\n===== [")
    if following >= 0:
        body = body[:following]
    return body.strip()[-STDERR_TAIL_CHARS:]


def _connected(mcp: Any, name: str) -> bool:
    server = mcp._servers.get(name)
    return server is not None and getattr(server, "session", None) is not None


def _connect_error(mcp: Any, name: str) -> str:
    with mcp._lock:
        return mcp._server_connect_errors.get(name) or "it did not connect"


def _disconnect(mcp: Any, name: str) -> None:
    """Close one server's connection and drop its tools (its settings changed)."""
    with mcp._lock:
        server = mcp._servers.pop(name, None)
        mcp._server_connect_errors.pop(name, None)
    _fingerprints.pop(name, None)
    if server is None:
        return
    try:
        mcp._run_on_mcp_loop(server.shutdown, timeout=15)
    except Exception:
        logger.warning("MCP server %s did not shut down cleanly", name, exc_info=True)
    logger.info("MCP server %s disconnected (its settings changed)", name)
