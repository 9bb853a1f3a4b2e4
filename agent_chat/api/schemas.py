"""The request and response bodies of the HTTP API, in camelCase.

Requests forbid unknown fields (a misspelt `modelld` is a 422, not silently ignored).
Responses never carry an API key (`ModelOut` has no field for one).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from agent_chat.db.attachment_models import Attachment

MAX_TITLE_CHARS = 200
MAX_ANSWER_CHARS = 20_000
MAX_ID = 2**31 - 1  # ids are INTEGER columns (32-bit on PostgreSQL): larger is a 422, not a 500


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# The database keeps naive UTC; the API says so (RFC 3339 with `Z`).
Timestamp = Annotated[datetime, AfterValidator(_utc)]


_INTEGER = (int, int | None)
_BOOLEAN = (bool, bool | None)


class Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _json_types(cls, value: Any, info: ValidationInfo) -> Any:
        # An integer or a boolean only as that JSON type: pydantic's lax mode took `true` and
        # `"2"` for an id and `"yes"` or 1 for a boolean, which the served schema says are
        # invalid (schemathesis found `"modelId": true` ran model 1). A whole
        # number written 2.0 is a JSON Schema integer and stays taken.
        annotation = cls.model_fields[info.field_name or ""].annotation
        if annotation in _INTEGER and isinstance(value, (bool, str)):
            raise ValueError("Input should be a valid integer")
        if annotation in _BOOLEAN and value is not None and not isinstance(value, bool):
            raise ValueError("Input should be a valid boolean")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _unicode(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("must be valid Unicode (no lone surrogates)") from None
        return value


class Out(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


# ---- errors ---------------------------------------------------------------------------------


class ErrorDetail(Out):
    code: str = Field(description="A stable, machine-readable reason, e.g. `not_found`.")
    message: str = Field(description="What went wrong, for a person.")
    fields: dict[str, str] | None = Field(default=None, description="Per-field problems (422).")


class ErrorOut(Out):
    error: ErrorDetail
    detail: str = Field(description="The same message (what FastAPI clients read).")


# ---- sessions -------------------------------------------------------------------------------


class SessionCreate(Body):
    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    model_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    skill_folder: str | None = Field(default=None, max_length=200)


class SessionCreated(Out):
    session_id: str = Field(description="The session's UUID (as in the page's URLs).")
    session_uuid: str


class SessionPatch(Body):
    title: str | None = Field(default=None, min_length=1, max_length=MAX_TITLE_CHARS)
    model_id: int | None = Field(
        default=None, ge=1, le=MAX_ID, description="null: the default model."
    )
    skill_folder: str | None = Field(default=None, max_length=200, description="null: none.")
    archived: bool | None = None
    pinned: bool | None = Field(default=None, description="Pinned to the top of the sidebar.")
    folder_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="A folder's id (GET /api/chat/folders); null: none.",
    )


class SessionOut(Out):
    id: str = Field(description="The session's UUID.")
    title: str
    model_id: int | None
    skill_folder: str | None
    status: Literal["ACTIVE", "ARCHIVED"]
    created_at: Timestamp
    last_message_at: Timestamp
    last_message_preview: str | None = None
    has_active_run: bool = Field(description="A run is going (or waiting for an answer).")
    waiting: bool = Field(description="A run waits for an answer to a question.")
    unread: bool = Field(description="A run finished while nobody was looking.")
    pinned: bool = False
    folder_id: int | None = Field(default=None, description="Its folder; null: none.")


class SessionPage(Out):
    sessions: list[SessionOut]
    has_more: bool
    next_offset: int | None


class LogOut(Out):
    seq: int = Field(description="The event's seq (a merged text row: its last seq).")
    seq_from: int = Field(description="The first seq the row covers.")
    type: str
    data: dict[str, Any]


class AttachmentOut(Out):
    id: int
    name: str
    size: int = Field(description="In bytes.")
    media_type: str = Field(description="Sniffed from the content, not the name.")
    sha256: str = Field(description="Hex SHA-256 of the bytes.")
    created_at: Timestamp


class AttachmentList(Out):
    attachments: list[AttachmentOut]


def attachment_out(row: Attachment) -> AttachmentOut:
    return AttachmentOut(
        id=row.id,
        name=row.name,
        size=row.size,
        media_type=row.media_type,
        sha256=row.sha256,
        created_at=row.created_at,
    )


class MessageOut(Out):
    id: int
    parent_id: int | None
    role: Literal["USER", "ASSISTANT", "SYSTEM"]
    content: str
    status: str
    run_id: str | None
    model_id: int | None
    skill_folder: str | None
    error: str | None
    created_at: Timestamp
    completed_at: Timestamp | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    context_tokens: int | None = Field(
        description="An answer's last model call's prompt tokens: how full the context "
        "window was (input_tokens adds up every call of the run)."
    )
    version: int = Field(description="Its 1-based place among its versions (siblings).")
    version_count: int
    attachments: list[AttachmentOut] = Field(
        default_factory=list,
        description="User messages: the files sent with it, in order (download each at "
        "/api/chat/attachments/{id}).",
    )
    logs: list[LogOut] | None = Field(default=None, description="Assistant messages: the run.")


class SessionDetail(Out):
    session: SessionOut
    messages: list[MessageOut]


class MessagePage(Out):
    messages: list[MessageOut]
    has_more: bool


# ---- runs -----------------------------------------------------------------------------------


class RunCreate(Body):
    message: str = Field(description="The question (the same size limit as the page).")
    model_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    skill_folder: str | None = Field(default=None, max_length=200)
    max_iterations: int | None = Field(
        default=None, ge=1, le=500, description="The agent's step limit for this run (90)."
    )
    tool_profile: str | None = Field(
        default=None,
        max_length=40,
        description="`chat` or `workspace` (those the operator enabled); the conversation's "
        "profile when left out.",
    )
    parent_message_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="The active branch's last message (refused with 409 if it is not).",
    )
    attachment_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(
        default_factory=list,
        max_length=10,
        description="Your uploaded files (`POST /api/chat/attachments`) the message carries, "
        "in order; another person's id is a 422, like a missing one.",
    )


class RunStarted(Out):
    run_id: str
    message_id: int = Field(description="The assistant message that will hold the answer.")
    user_message_id: int
    new_message_id: int = Field(
        description="The new version: the assistant message (regenerate), the user message "
        "(edit), else the assistant message."
    )


class PendingOut(Out):
    kind: str = Field(description="`clarify` (a question), `approval` (a dangerous step), …")
    clarify_id: str = Field(description="Answer it with `POST .../resume` and this id.")
    question: str = Field(description="The question (for an approval: the command).")
    detail: str | None = Field(default=None, description="For an approval: why it is risky.")
    choices: list[str]
    created_at: Timestamp


class RunStateOut(Out):
    run_id: str
    session_id: str
    message_id: int
    status: Literal["running", "waiting_input", "succeeded", "failed", "stopped"]
    live: bool = Field(description="Followed by this app now (events still come).")
    last_event_id: int
    error: str | None
    pending: PendingOut | None


class ResumeBody(Body):
    clarify_id: str = Field(min_length=1, max_length=200)
    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)


class Accepted(Out):
    run_id: str
    status: str


# ---- versions -------------------------------------------------------------------------------


class MessageEdit(Body):
    content: str
    attachment_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Field(
        default=None,
        max_length=10,
        description="The new version's files, in order (your uploads; `[]`: none). Left out, "
        "it keeps the edited message's files.",
    )


class VersionOut(Out):
    message_id: int
    branch_order: int
    is_active: bool
    created_at: Timestamp
    status: str
    preview: str


class VersionList(Out):
    versions: list[VersionOut]


# ---- models and skills ----------------------------------------------------------------------


class ModelOut(Out):
    id: int
    name: str
    model: str
    base_url: str
    context_length: int | None
    is_default: bool
    has_api_key: bool
    supports_images: bool = Field(description="Attached images go to it as image parts.")


class SkillOut(Out):
    folder_name: str
    name: str
    description: str
    valid: bool
    error: str | None
