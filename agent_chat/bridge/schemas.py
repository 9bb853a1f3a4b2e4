"""Request bodies of the bridge protocol (docs/architecture.md §4)."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

# hermes refuses models whose context window is below this many tokens.
HERMES_MIN_CONTEXT = 64_000

# The person a run or an agent is for (the app's `app_user.id`): their hermes home
# (bridge/homes.py). A JSON integer above 0 only: no string, no path.
MAX_USER_ID = 2**63 - 1  # a database id (BIGINT); a longer number is no user
UserId = Annotated[int, Field(gt=0, le=MAX_USER_ID, strict=True)]


class ModelSpec(BaseModel):
    """The OpenAI-compatible endpoint a run talks to."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    base_url: str = Field(min_length=1)
    api_key: str | None = None
    model: str = Field(min_length=1)
    context_length: int | None = Field(default=None, ge=HERMES_MIN_CONTEXT)
    max_tokens: int | None = Field(default=None, gt=0)
    # The app's model says it reads images: a message's image parts go to it as they are.
    supports_images: bool = False

    def pool_key(self) -> tuple[object, ...]:
        """What an agent instance is built from: a change means a new agent."""
        return (self.base_url, self.api_key or "", self.model, self.context_length, self.max_tokens)


class HistoryMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str


# A message with attachments (the app's services/attachment_parts.py): OpenAI content parts,
# which hermes' run_conversation takes as the user message. Bounds: 10 attachments and the
# text part; an image is a data: URL of at most a 20 MB file (base64: 4/3 of it).
MAX_PARTS = 11
MAX_IMAGE_URL_CHARS = 40_000_000


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["text"]
    text: str = Field(min_length=1)


class ImageUrl(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        pattern=r"^data:image/(png|jpeg|gif|webp);base64,", max_length=MAX_IMAGE_URL_CHARS
    )


class ImagePart(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["image_url"]
    image_url: ImageUrl


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


# An MCP server's name is part of hermes' tool names (`mcp__<name>__<tool>`) and toolset.
MCP_NAME = r"^[a-z0-9][a-z0-9_-]{0,31}$"
MAX_MCP_SERVERS = 20
_Short = Annotated[str, Field(max_length=4000)]


class McpServerSpec(BaseModel):
    """One MCP server an agent may use (the app's `mcp_server` row, secrets included: they
    go only to hermes, which starts or calls the server)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=MCP_NAME)
    transport: Literal["stdio", "http"]
    command: str | None = Field(default=None, min_length=1, max_length=4000)
    args: tuple[_Short, ...] = Field(default=(), max_length=100)
    env: dict[str, _Short] = Field(default_factory=dict, max_length=100)
    url: str | None = Field(default=None, pattern=r"^https?://", max_length=4000)
    headers: dict[str, _Short] = Field(default_factory=dict, max_length=100)
    include: tuple[_Short, ...] = Field(default=(), max_length=500)
    exclude: tuple[_Short, ...] = Field(default=(), max_length=500)
    connect_timeout: float = Field(default=30, gt=0, le=300)
    timeout: float = Field(default=120, gt=0, le=3600)  # one tool call
    ask: bool = False  # each call waits for a person's consent

    @model_validator(mode="after")
    def _transport_fields(self) -> McpServerSpec:
        if self.transport == "stdio" and not self.command:
            raise ValueError("a stdio server needs its command")
        if self.transport == "http" and not self.url:
            raise ValueError("an HTTP server needs its URL")
        return self

    def hermes_config(self) -> dict[str, object]:
        """The `mcp_servers.<name>` entry hermes' MCP client reads."""
        config: dict[str, object] = {
            "connect_timeout": self.connect_timeout,
            "timeout": self.timeout,
        }
        if self.transport == "stdio":
            config.update(command=self.command, args=list(self.args), env=dict(self.env))
        else:
            config.update(url=self.url, headers=dict(self.headers))
        if self.include or self.exclude:
            config["tools"] = {"include": list(self.include), "exclude": list(self.exclude)}
        return config

    def fingerprint(self) -> str:
        """Changes with any setting: the bridge then connects the server again."""
        # `ask` is read at each call (bridge/mcp_consent.py): no reconnect for it.
        raw = json.dumps(self.model_dump(mode="json", exclude={"ask"}), sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()


def _unique_names(servers: list[McpServerSpec]) -> list[McpServerSpec]:
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise ValueError("two MCP servers with one name")
    return servers


McpServers = Annotated[
    list[McpServerSpec], Field(max_length=MAX_MCP_SERVERS), AfterValidator(_unique_names)
]


def mcp_key(servers: list[McpServerSpec] | tuple[McpServerSpec, ...]) -> tuple[str, ...]:
    """What an agent's MCP tools are built from: a change means a new agent."""
    return tuple(sorted(s.fingerprint() for s in servers))


class StartRunRequest(BaseModel):
    user: UserId
    session_id: str = Field(min_length=1, max_length=200)
    # Plain text, or content parts (text first) when the message carries attachments.
    message: (
        Annotated[str, Field(min_length=1)]
        | Annotated[list[ContentPart], Field(min_length=1, max_length=MAX_PARTS)]
    )
    history: list[HistoryMessage] = Field(default_factory=list)
    system_prompt: str | None = None
    model: ModelSpec
    max_iterations: int | None = Field(default=None, gt=0)
    # A profile of agent_chat.common.tool_profiles; the bridge refuses one it has not enabled.
    tool_profile: str = Field(default="chat", min_length=1, max_length=40)
    # The conversation whose folder a Workspace run works in (default: the session id; the
    # app passes the conversation's UUID, which a reset keeps).
    workspace: str | None = Field(default=None, min_length=1, max_length=200)
    # The MCP servers this run's agent may use (the app's settings, for the run's profile).
    mcp_servers: McpServers = Field(default_factory=list)
    run_id: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("message")
    @classmethod
    def _text_first(cls, message: str | list[TextPart | ImagePart]) -> object:
        if not isinstance(message, str) and not isinstance(message[0], TextPart):
            raise ValueError("content parts begin with the text part")
        return message

    def agent_message(self) -> str | list[dict[str, object]]:
        """What hermes' run_conversation is given: the text, or the parts as plain dicts."""
        if isinstance(self.message, str):
            return self.message
        return [part.model_dump() for part in self.message]


class ClarifyAnswer(BaseModel):
    clarify_id: str = Field(min_length=1)
    answer: str


class PrepareRequest(BaseModel):
    """Build a session's agent for a person ahead of their first message."""

    user: UserId
    model: ModelSpec
    tool_profile: str = Field(default="chat", min_length=1, max_length=40)
    mcp_servers: McpServers = Field(default_factory=list)


class SteerRequest(BaseModel):
    text: str = Field(min_length=1, max_length=100_000)


class MemoryUpdate(BaseModel):
    """New MEMORY.md / USER.md texts; a missing field keeps the file as it is. (`user` is
    USER.md here: whose memory it is goes in the query, `?user=<id>`.)"""

    memory: str | None = None
    user: str | None = None


class ClaimSharedMemory(BaseModel):
    """Hand the shared memory of an install from before accounts to this person, once."""

    user: UserId
