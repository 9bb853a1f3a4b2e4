"""Store functions of the MCP servers (`db/mcp_models.py`): every value checked field by
field (`ValidationFailed`, nothing half-saved), a secret kept when an edit leaves it out.

A secret (an `env` value, a header's value) is never read back to a client: an edit sends
`None` for a name whose stored value stays, a new value to change it, and leaves a name out
to remove it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

from sqlmodel import Session, col, func, select

from agent_chat.common.tool_profiles import TOOLSETS
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.mcp_models import TRANSPORTS, McpServer
from agent_chat.db.models import utcnow

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
MAX_ITEMS = 100
MAX_TOOLS = 500
MAX_TEXT = 4000
MAX_SERVERS = 20  # what one run may carry to the bridge (bridge/schemas.py)


@dataclass
class McpValues:
    """A server as a form or an API body gives it. `env` / `headers`: a value None keeps the
    stored one of that name."""

    name: str
    transport: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str | None] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str | None] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    ask: bool = True
    enabled: bool = True
    connect_timeout: float = 30
    timeout: float = 120


def list_servers(*, session: Session) -> list[McpServer]:
    return list(session.exec(select(McpServer).order_by(col(McpServer.name))).all())


def get_server(*, session: Session, server_id: int) -> McpServer:
    server = session.get(McpServer, server_id)
    if server is None:
        raise NotFound(f"No MCP server {server_id}.")
    return server


def for_profile(*, session: Session, profile: str) -> tuple[dict[str, object], ...]:
    """The specs of the enabled servers a run of `profile` gets (secrets included: for the
    bridge only)."""
    servers = session.exec(select(McpServer).where(col(McpServer.enabled))).all()
    return tuple(
        s.spec() for s in sorted(servers, key=lambda s: s.name) if _has_profile(s, profile)
    )


def _has_profile(server: McpServer, profile: str) -> bool:
    return not server.profiles or profile in server.profiles


def save_server(*, session: Session, server_id: int | None, values: McpValues) -> McpServer:
    """Create (`server_id` None) or replace a server's settings."""
    server = _target(session, server_id)
    _apply(session, server, values)
    session.add(server)
    session.commit()
    session.refresh(server)
    return server


def preview_spec(
    *, session: Session, server_id: int | None, values: McpValues
) -> dict[str, object]:
    """The spec `values` would save (checked the same way, stored secrets filled in), saving
    nothing: what Test tries before Save."""
    stored = _target(session, server_id)
    draft = McpServer(
        id=stored.id, name="", transport="stdio", env_json=stored.env_json,
        headers_json=stored.headers_json,
    )  # fmt: skip
    _apply(session, draft, values)
    return draft.spec()


def _target(session: Session, server_id: int | None) -> McpServer:
    if server_id is None:
        return McpServer(name="", transport="stdio")
    return get_server(session=session, server_id=server_id)


def _apply(session: Session, server: McpServer, values: McpValues) -> None:
    errors = _check(session, values, server)
    if errors:
        raise ValidationFailed(errors)
    stdio = values.transport == "stdio"
    server.name = values.name
    server.transport = values.transport
    server.command = values.command.strip() if stdio and values.command else None
    server.args_json = json.dumps(values.args if stdio else [])
    server.env_json = json.dumps(_merged(values.env, server.env) if stdio else {})
    server.url = values.url.strip() if not stdio and values.url else None
    server.headers_json = json.dumps({} if stdio else _merged(values.headers, server.headers))
    server.include_json = json.dumps(values.include)
    server.exclude_json = json.dumps(values.exclude)
    server.profiles_json = json.dumps(values.profiles)
    server.ask = values.ask
    server.enabled = values.enabled
    server.connect_timeout = float(values.connect_timeout)
    server.timeout = float(values.timeout)
    server.updated_at = utcnow()


def set_enabled(*, session: Session, server_id: int, enabled: bool) -> McpServer:
    server = get_server(session=session, server_id=server_id)
    server.enabled = enabled
    server.updated_at = utcnow()
    session.add(server)
    session.commit()
    session.refresh(server)
    return server


def delete_server(*, session: Session, server_id: int) -> None:
    session.delete(get_server(session=session, server_id=server_id))
    session.commit()


def _count(session: Session) -> int:
    return session.exec(select(func.count()).select_from(McpServer)).one()


def _merged(given: dict[str, str | None], stored: dict[str, str]) -> dict[str, str]:
    return {k: (stored[k] if v is None else v) for k, v in given.items()}


def _check(session: Session, v: McpValues, server: McpServer) -> dict[str, str]:
    errors: dict[str, str] = {}
    if server.id is None and _count(session) >= MAX_SERVERS:
        errors["name"] = f"At most {MAX_SERVERS} MCP servers: delete one first."
    elif not NAME.match(v.name or ""):
        errors["name"] = (
            "A name of 1-32 lower-case letters, digits, '-' or '_', beginning with a letter "
            "or digit (it becomes part of the tools' names)."
        )
    else:
        clash = session.exec(select(McpServer).where(col(McpServer.name) == v.name)).first()
        if clash is not None and clash.id != server.id:
            errors["name"] = f"An MCP server named {v.name!r} already exists."
    if v.transport not in TRANSPORTS:
        errors["transport"] = "The transport is stdio (a command) or http (a URL)."
    elif v.transport == "stdio":
        _check_stdio(errors, v, server)
    else:
        _check_http(errors, v, server)
    _check_lists(errors, v)
    if not 1 <= v.connect_timeout <= 300:
        errors["connect_timeout"] = "The connect timeout is 1 to 300 seconds."
    if not 1 <= v.timeout <= 3600:
        errors["timeout"] = "A tool call's timeout is 1 to 3600 seconds."
    return errors


def _check_stdio(errors: dict[str, str], v: McpValues, server: McpServer) -> None:
    if not (v.command or "").strip():
        errors["command"] = "A stdio server needs the command that starts it."
    elif len(v.command or "") > MAX_TEXT or "\x00" in (v.command or ""):
        errors["command"] = f"The command is at most {MAX_TEXT} characters, without NUL."
    if len(v.args) > MAX_ITEMS or any(len(a) > MAX_TEXT or "\x00" in a for a in v.args):
        errors["args"] = f"At most {MAX_ITEMS} arguments of {MAX_TEXT} characters, no NUL."
    bad = [k for k in v.env if not ENV_NAME.match(k)]
    if len(v.env) > MAX_ITEMS or bad:
        errors["env"] = f"Variable names are letters, digits and '_' (not {bad[:1]})."
    elif any(x is not None and (len(x) > MAX_TEXT or "\x00" in x) for x in v.env.values()):
        errors["env"] = f"A value is at most {MAX_TEXT} characters, without NUL."
    elif missing := [k for k, x in v.env.items() if x is None and k not in server.env]:
        errors["env"] = f"No stored value for {missing[0]}: type one."


def _check_http(errors: dict[str, str], v: McpValues, server: McpServer) -> None:
    parsed = urlparse((v.url or "").strip())
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or len(v.url or "") > MAX_TEXT
        or any(c in (v.url or "") for c in "\x00\r\n")
    ):
        errors["url"] = "The URL must be an http:// or https:// URL with a host."
    bad = [k for k in v.headers if not HEADER_NAME.match(k)]
    if len(v.headers) > MAX_ITEMS or bad:
        errors["headers"] = f"Header names are letters, digits and - (not {bad[:1]})."
    elif any(
        x is not None and (len(x) > MAX_TEXT or any(c in x for c in "\r\n\x00"))
        for x in v.headers.values()
    ):
        errors["headers"] = f"A header value is one line of at most {MAX_TEXT} characters."
    elif missing := [k for k, x in v.headers.items() if x is None and k not in server.headers]:
        errors["headers"] = f"No stored value for {missing[0]}: type one."


def _check_lists(errors: dict[str, str], v: McpValues) -> None:
    for name, items in (("include", v.include), ("exclude", v.exclude)):
        if len(items) > MAX_TOOLS or any(not t or len(t) > 200 for t in items):
            errors[name] = f"At most {MAX_TOOLS} tool names of 1-200 characters."
    if v.include and v.exclude:
        errors["exclude"] = "Choose the tools to include or those to exclude, not both."
    unknown = [p for p in v.profiles if p not in TOOLSETS]
    if unknown:
        errors["profiles"] = f"Unknown tool profile {unknown[0]!r} (known: {', '.join(TOOLSETS)})."
