"""Request bodies of the bridge protocol (docs/architecture.md §4)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
