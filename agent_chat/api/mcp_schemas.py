"""The bodies of the MCP servers' routes (`api/mcp.py`), camelCase with a bound on every
field, as `api/schemas.py`'s. A secret (an `env` value, a header's value) is written, never
read: the responses carry `envNames` and `headerNames` only."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_chat.api.schemas import Body, Out

MAX_ITEMS = 100
MAX_TOOLS = 500
_Text = Field(max_length=4000)
_SECRETS = (
    "Name → value. On a change, a value `null` keeps the stored value of that name, and a "
    "name left out is removed. Values are never sent back."
)


class McpServerIn(Body):
    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$",
        description="Lower-case letters, digits, `-`, `_`: the agent's tools are named "
        "`mcp__<name>__<tool>`.",
    )
    transport: Literal["stdio", "http"]
    command: str | None = Field(default=None, max_length=4000, description="stdio: the program")
    args: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)
    env: dict[str, str | None] = Field(
        default_factory=dict, max_length=MAX_ITEMS, description=f"stdio: {_SECRETS}"
    )
    url: str | None = Field(default=None, max_length=4000, description="http: streamable HTTP")
    headers: dict[str, str | None] = Field(
        default_factory=dict, max_length=MAX_ITEMS, description=f"http: {_SECRETS}"
    )
    include: list[str] = Field(default_factory=list, max_length=MAX_TOOLS)
    exclude: list[str] = Field(default_factory=list, max_length=MAX_TOOLS)
    profiles: list[str] = Field(
        default_factory=list, max_length=10, description="The tool profiles that get it (all: [])."
    )
    ask: bool = Field(default=True, description="Each call waits for a person's consent.")
    enabled: bool = True
    connect_timeout: float = Field(default=30, ge=1, le=300)
    timeout: float = Field(default=120, ge=1, le=3600, description="One tool call, seconds.")


class McpServerOut(Out):
    id: int
    name: str
    transport: Literal["stdio", "http"]
    command: str | None
    args: list[str]
    env_names: list[str]
    url: str | None
    header_names: list[str]
    include: list[str]
    exclude: list[str]
    profiles: list[str]
    ask: bool
    enabled: bool
    connect_timeout: float
    timeout: float


class McpServerList(Out):
    servers: list[McpServerOut]


class McpToolOut(Out):
    name: str
    description: str


class McpTestOut(Out):
    ok: bool
    tools: list[McpToolOut]
    error: str | None = Field(description="Why it could not connect, in words.")
    seconds: float


class McpStatusOut(Out):
    name: str
    bridge: str
    connected: bool
    tools: int
    error: str | None


class McpStatusList(Out):
    servers: list[McpStatusOut]


class ConversationMcpOut(Out):
    servers: list[str] = Field(description="The MCP servers this conversation's runs may use.")
