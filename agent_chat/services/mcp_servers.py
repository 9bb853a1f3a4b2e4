"""Use cases on the MCP servers (docs/architecture.md §4c): administrators add, change,
enable, delete and test them and see each one's status on the bridges; everyone sees which
servers a conversation's tool profile gets (names, never settings).

What leaves here for a client is `McpServerView`: a secret's name, never its value (an `env`
value or a header's value stays in the database and goes to the bridge with a run).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from agent_chat.common.tool_images import image_path
from agent_chat.common.workspaces import workspaces_root
from agent_chat.db import mcp_servers
from agent_chat.db.errors import NotFound
from agent_chat.db.mcp_models import McpServer
from agent_chat.db.mcp_servers import McpValues
from agent_chat.runs.bridges import NoHealthyBridge
from agent_chat.runs.client import BridgeError
from agent_chat.services.backend import Backend
from agent_chat.services.conversations import conversation_for
from agent_chat.services.users import require_admin as _require_admin

__all__ = ["McpValues"]

ADMINS_ONLY = "Only an administrator can see, add, change, test or delete MCP servers."


@dataclass(frozen=True)
class McpServerView:
    id: int
    name: str
    transport: str
    command: str | None
    args: list[str]
    env_names: list[str]  # the values are secrets: never shown
    url: str | None
    header_names: list[str]
    include: list[str]
    exclude: list[str]
    profiles: list[str]
    ask: bool
    enabled: bool
    connect_timeout: float
    timeout: float

    @classmethod
    def of(cls, s: McpServer) -> McpServerView:
        return cls(
            id=s.id or 0,
            name=s.name,
            transport=s.transport,
            command=s.command,
            args=s.args,
            env_names=sorted(s.env),
            url=s.url,
            header_names=sorted(s.headers),
            include=s.include,
            exclude=s.exclude,
            profiles=s.profiles,
            ask=s.ask,
            enabled=s.enabled,
            connect_timeout=s.connect_timeout,
            timeout=s.timeout,
        )


@dataclass(frozen=True)
class McpTest:
    ok: bool
    tools: list[dict[str, str]]  # name, description
    error: str | None
    seconds: float


@dataclass(frozen=True)
class McpStatus:
    """A server on one bridge: connected (with its tool count), or its last error, or not
    used there yet (`connected` False, `error` None)."""

    name: str
    bridge: str
    connected: bool
    tools: int
    error: str | None


async def require_admin(svc: Backend, *, user_id: int | None) -> None:
    await _require_admin(svc, user_id=user_id, refusal=ADMINS_ONLY)


async def list_servers(svc: Backend, *, user_id: int) -> list[McpServerView]:
    await require_admin(svc, user_id=user_id)
    return [McpServerView.of(s) for s in await svc.storage.call(mcp_servers.list_servers)]


async def get_server(svc: Backend, *, user_id: int, server_id: int) -> McpServerView:
    await require_admin(svc, user_id=user_id)
    return McpServerView.of(await svc.storage.call(mcp_servers.get_server, server_id=server_id))


async def save_server(
    svc: Backend, *, user_id: int, server_id: int | None, values: McpValues
) -> McpServerView:
    """A new server (`server_id` None) or new settings for one; `ValidationFailed` names
    each bad field and saves nothing."""
    await require_admin(svc, user_id=user_id)
    saved = await svc.storage.call(mcp_servers.save_server, server_id=server_id, values=values)
    return McpServerView.of(saved)


async def set_enabled(
    svc: Backend, *, user_id: int, server_id: int, enabled: bool
) -> McpServerView:
    await require_admin(svc, user_id=user_id)
    saved = await svc.storage.call(mcp_servers.set_enabled, server_id=server_id, enabled=enabled)
    return McpServerView.of(saved)


async def delete_server(svc: Backend, *, user_id: int, server_id: int) -> None:
    await require_admin(svc, user_id=user_id)
    await svc.storage.call(mcp_servers.delete_server, server_id=server_id)


async def test_server(
    svc: Backend,
    *,
    user_id: int,
    server_id: int | None = None,
    values: McpValues | None = None,
) -> McpTest:
    """Connect to a server once and list its tools, on a bridge (where its runs would start
    it): the stored one, or `values` as the form holds them (checked as Save checks them,
    the stored secrets filled in). A bridge that cannot be asked is the test's error."""
    await require_admin(svc, user_id=user_id)
    if values is None:
        stored = await svc.storage.call(mcp_servers.get_server, server_id=server_id or 0)
        spec = stored.spec()
    else:
        spec = await svc.storage.call(mcp_servers.preview_spec, server_id=server_id, values=values)
    try:
        bridges = svc.runs.bridges
        answer = await bridges.client(bridges.choose()).test_mcp(spec)
    except (BridgeError, NoHealthyBridge) as exc:
        return McpTest(False, [], f"No agent service could run the test: {exc}", 0.0)
    return McpTest(
        ok=bool(answer.get("ok")),
        tools=[
            {"name": str(t.get("name", "")), "description": str(t.get("description", ""))}
            for t in answer.get("tools") or []
        ],
        error=answer.get("error"),
        seconds=float(answer.get("seconds") or 0.0),
    )


async def status(svc: Backend, *, user_id: int) -> list[McpStatus]:
    """Each server on each bridge (the bridges asked at once; one that does not answer gives
    its error for every server)."""
    await require_admin(svc, user_id=user_id)
    servers = await svc.storage.call(mcp_servers.list_servers)
    bridges = svc.runs.bridges
    urls = list(bridges.configured)

    async def ask(url: str) -> list[dict] | str:
        try:
            return await bridges.client(url).mcp_status()
        except BridgeError as exc:
            return str(exc)

    answers = await asyncio.gather(*(ask(url) for url in urls))
    rows: list[McpStatus] = []
    for url, answer in zip(urls, answers, strict=True):
        known = {} if isinstance(answer, str) else {r.get("name"): r for r in answer}
        for server in servers:
            row = known.get(server.name)
            if isinstance(answer, str):
                rows.append(McpStatus(server.name, url, False, 0, answer))
            elif row is None:
                rows.append(McpStatus(server.name, url, False, 0, None))
            else:
                rows.append(
                    McpStatus(
                        server.name,
                        url,
                        bool(row.get("connected")),
                        int(row.get("tools") or 0),
                        row.get("error"),
                    )
                )
    return rows


async def conversation_servers(svc: Backend, *, user_id: int, session_uuid: str) -> list[str]:
    """The names of the MCP servers the conversation's tool profile gets (anyone, for their
    own conversation: its settings stay the administrators')."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    return await profile_servers(svc, profile=chat.tool_profile)


async def profile_servers(svc: Backend, *, profile: str) -> list[str]:
    """The names of the enabled MCP servers a run of `profile` gets (anyone: the composer
    names them for the profile chosen there, which the next message's run uses)."""
    specs = await svc.storage.call(mcp_servers.for_profile, profile=profile)
    return [str(spec["name"]) for spec in specs]


async def tool_image(
    svc: Backend, *, user_id: int, session_uuid: str, name: str, root: Path | None = None
) -> Path:
    """The file of a picture an MCP tool returned in one of the person's conversations
    (common/tool_images.py); NotFound for anything else, the same for every reason."""
    await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    try:
        path = image_path(root or workspaces_root(), session_uuid, name)
    except ValueError:
        raise NotFound("No such picture in this conversation.") from None
    if path.is_symlink() or not await asyncio.to_thread(path.is_file):
        raise NotFound("No such picture in this conversation.")
    return path
