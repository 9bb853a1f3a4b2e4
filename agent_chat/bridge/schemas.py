"""Request bodies of the bridge protocol (docs/architecture.md §4)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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

    def pool_key(self) -> tuple[object, ...]:
        """What an agent instance is built from: a change means a new agent."""
        return (self.base_url, self.api_key or "", self.model, self.context_length, self.max_tokens)


class HistoryMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str


class StartRunRequest(BaseModel):
    user: UserId
    session_id: str = Field(min_length=1, max_length=200)
    message: str = Field(min_length=1)
    history: list[HistoryMessage] = Field(default_factory=list)
    system_prompt: str | None = None
    model: ModelSpec
    max_iterations: int | None = Field(default=None, gt=0)
    # A profile of agent_chat.common.tool_profiles; the bridge refuses one it has not enabled.
    tool_profile: str = Field(default="chat", min_length=1, max_length=40)
    # The conversation whose folder a Workspace run works in (default: the session id; the
    # app passes the conversation's UUID, which a reset keeps).
    workspace: str | None = Field(default=None, min_length=1, max_length=200)
    run_id: str | None = Field(default=None, min_length=1, max_length=200)


class ClarifyAnswer(BaseModel):
    clarify_id: str = Field(min_length=1)
    answer: str


class PrepareRequest(BaseModel):
    """Build a session's agent for a person ahead of their first message."""

    user: UserId
    model: ModelSpec
    tool_profile: str = Field(default="chat", min_length=1, max_length=40)


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
