"""SQLModel tables (docs/architecture.md §5; more in db/*_models.py). Plain SQLModel, not rx.Model.
Enumerated columns are plain strings of StrEnum values: a new value needs no migration. Datetimes
are naive UTC, `sa_type=DateTime` (sqlmodel's aware column reads in PostgreSQL's own zone)."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from uuid import uuid4

import sqlalchemy as sa
from sqlalchemy import DateTime, Index, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

import agent_chat.db.attachment_models  # noqa: F401  (registers the attachments' tables)
import agent_chat.db.mcp_models  # noqa: F401  (the MCP servers' table)
from agent_chat.db.names import keep_name_key
from agent_chat.db.schedule_models import made_by_fk  # also registers the schedules' tables


def utcnow() -> datetime:
    """Now as a naive UTC datetime (what every timestamp column stores)."""
    return datetime.now(UTC).replace(tzinfo=None)


def new_uuid() -> str:
    return str(uuid4())


class SessionStatus(StrEnum):
    ACTIVE = "ACTIVE"
    ARCHIVED = "ARCHIVED"


class MessageRole(StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    SYSTEM = "SYSTEM"


class MessageStatus(StrEnum):
    SENT = "SENT"
    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    SUMMARY = "SUMMARY"
    RESET = "RESET"


class PauseStatus(StrEnum):
    UNANSWERED = "UNANSWERED"
    ANSWERED = "ANSWERED"
    ABANDONED = "ABANDONED"


class ModelConfig(SQLModel, table=True):
    """An OpenAI-compatible endpoint the agent can use. `api_key` never goes to the browser."""

    __tablename__ = "model_config"
    __table_args__ = (  # named, so a SQLite batch migration can drop it (db/names.py)
        UniqueConstraint("name_key", name="uq_model_config_name_key"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str
    name_key: str = ""  # names.name_key(name), filled on every write
    base_url: str
    model_name: str
    api_key: str | None = None
    context_length: int | None = None
    price_input: float | None = None  # optional, USD per million tokens (cost figures)
    price_output: float | None = None
    is_default: bool = False
    supports_images: bool = False  # it reads image parts
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


class ChatFolder(SQLModel, table=True):
    """A sidebar folder (one level) grouping conversations; deleting it keeps them."""

    __tablename__ = "chat_folder"
    __table_args__ = (
        # Unique per owner by the key (db/names.py); owner first: the index of "my folders".
        UniqueConstraint("owner_id", "name_key", name="uq_chat_folder_owner_id_name_key"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    # Whose folder; NULL only from before accounts, until the first admin adopts it.
    owner_id: int | None = Field(default=None, foreign_key="app_user.id", ondelete="CASCADE")
    name: str
    name_key: str = ""  # names.name_key(name), filled on every write
    collapsed: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


keep_name_key(ModelConfig, ChatFolder)


class ChatSession(SQLModel, table=True):
    """A conversation; `session_uuid` is the id used in URLs."""

    __tablename__ = "chat_session"
    __table_args__ = (
        # The owner leads each index. One status, most recent first (lists, the API).
        Index(
            "ix_chat_session_owner_id_status_last_message_at",
            "owner_id",
            "status",
            "last_message_at",
        ),
        # A folder's conversations, newest first, and the folders' counts (db/folders.py).
        Index(
            "ix_chat_session_owner_folder_status_pinned_last",
            "owner_id",
            "folder_id",
            "status",
            "pinned_at",
            "last_message_at",
        ),
        Index("ix_chat_session_owner_id_pinned_at", "owner_id", "pinned_at"),
        UniqueConstraint("session_uuid", name="uq_chat_session_session_uuid"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    session_uuid: str = Field(default_factory=new_uuid)
    # Only its owner reads or changes it; NULL only from before accounts (as folders').
    owner_id: int | None = Field(default=None, foreign_key="app_user.id", ondelete="CASCADE")
    title: str = ""
    model_id: int | None = Field(default=None, foreign_key="model_config.id", ondelete="SET NULL")
    skill_folder: str | None = None
    # A profile of agent_chat.common.tool_profiles (which tools the agent has).
    tool_profile: str = Field(default="chat", sa_column_kwargs={"server_default": "chat"})
    # The hermes-agent session id; replaced on reset so the agent forgets.
    hermes_session: str = Field(default_factory=new_uuid)
    status: str = SessionStatus.ACTIVE.value
    # A run finished while nobody was looking at the conversation.
    unread: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    last_summarized_at: datetime | None = Field(default=None, sa_type=DateTime)
    # Sidebar order (db/folders.py): pinned ones first, newest pin on top; a folder or none.
    pinned_at: datetime | None = Field(default=None, sa_type=DateTime)
    folder_id: int | None = Field(default=None, foreign_key="chat_folder.id", ondelete="SET NULL")
    # The schedule that made it or adds to it (the sidebar's clock); NULL once that is deleted.
    schedule_id: int | None = Field(default=None, index=True, sa_column_args=[made_by_fk()])
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    last_message_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


class ChatMessage(SQLModel, table=True):
    """A node of a session's message tree. Among siblings exactly one is active."""

    __tablename__ = "chat_message"
    __table_args__ = (
        Index("ix_chat_message_session_id_created_at", "session_id", "created_at"),
        Index("ix_chat_message_parent_id_is_active", "parent_id", "is_active"),
        Index("ix_chat_message_run_id", "run_id"),
        # The few RUNNING answers, read at start and each second by the takeover watch
        # (runs/takeover.py) with several workers: partial, so it stays tiny.
        Index(
            "ix_chat_message_running",
            "id",
            sqlite_where=text("status = 'RUNNING'"),
            postgresql_where=text("status = 'RUNNING'"),
        ),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="chat_session.id", ondelete="CASCADE")
    parent_id: int | None = Field(default=None, foreign_key="chat_message.id", ondelete="CASCADE")
    is_active: bool = True
    branch_order: int = 0
    run_id: str | None = None
    role: str
    content: str = Field(default="", sa_type=Text)
    status: str
    model_id: int | None = None
    skill_folder: str | None = None
    tool_profile: str | None = None  # assistant messages: the profile the run had
    bridge_url: str | None = None  # answers: the run's bridge (runs/bridges.py); None: the first
    error: str | None = Field(default=None, sa_type=Text)
    attachment_id: int | None = None  # reserved for attachments
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    context_tokens: int | None = None  # its last model call's prompt: how full the window was
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    completed_at: datetime | None = Field(default=None, sa_type=DateTime)


class ChatMessageLog(SQLModel, table=True):
    """One persisted run event (or a merged run of text deltas) of an assistant message."""

    __tablename__ = "chat_message_log"
    __table_args__ = (
        # Unique so that a re-delivered event (same seq) cannot be stored twice.
        Index("ix_chat_message_log_message_id_seq", "message_id", "seq", unique=True),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    message_id: int = Field(foreign_key="chat_message.id", ondelete="CASCADE")
    seq: int
    kind: str
    content: str = Field(default="", sa_type=Text)
    tool_name: str | None = None
    meta_json: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


class RunPause(SQLModel, table=True):
    """A question the agent asked back (AskFor/clarify), or a dangerous step waiting for consent
    (kind "approval": `question` the command, `detail` why it is dangerous), and the answer."""

    __tablename__ = "run_pause"
    __table_args__ = (
        UniqueConstraint("run_id", "clarify_id", name="uq_run_pause_run_id_clarify_id"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True)
    message_id: int = Field(foreign_key="chat_message.id", ondelete="CASCADE")
    clarify_id: str
    kind: str = Field(default="clarify", sa_column_kwargs={"server_default": "clarify"})
    question: str = Field(sa_type=Text)
    detail: str | None = Field(default=None, sa_type=Text)
    choices_json: str = Field(default="[]", sa_type=Text)
    status: str = PauseStatus.UNANSWERED.value
    answer: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    answered_at: datetime | None = Field(default=None, sa_type=DateTime)


class ApiToken(SQLModel, table=True):
    """A personal API token for `Authorization: Bearer` (HTTP API, CLI). Only the SHA-256
    of the token is stored; the token itself is shown once, when it is made."""

    __tablename__ = "api_token"
    __table_args__ = (
        UniqueConstraint("token_hash", name="uq_api_token_token_hash"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    # Whom it acts for (on their data only); NULL: from before accounts (as folders').
    user_id: int | None = Field(None, foreign_key="app_user.id", ondelete="CASCADE", index=True)
    name: str
    token_hash: str
    # The first characters of the token, to tell tokens apart in the list.
    prefix: str
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    last_used_at: datetime | None = Field(default=None, sa_type=DateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=DateTime)


class QueuedMessage(SQLModel, table=True):
    """A message the person queued while a run worked: sent, in order, when it ends."""

    __tablename__ = "queued_message"
    __table_args__ = ({"extend_existing": True},)

    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="chat_session.id", ondelete="CASCADE", index=True)
    content: str = Field(sa_type=Text)
    model_id: int | None = None
    skill_folder: str | None = None
    tool_profile: str | None = None
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


class ShareLink(SQLModel, table=True):
    """A read-only link to a snapshot of one conversation's active branch (`/s/<token>`).
    Only the SHA-256 of the token is stored; the link is shown once, when it is made."""

    __tablename__ = "share_link"
    __table_args__ = (
        UniqueConstraint("token_hash", name="uq_share_link_token_hash"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="chat_session.id", ondelete="CASCADE", index=True)
    token_hash: str
    prefix: str  # the token's first characters, to tell links apart in the lists
    title: str = ""
    # The snapshot the page shows (agent_chat/share_page/snapshot.py), frozen at creation.
    snapshot_json: str = Field(sa_type=Text)
    message_count: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    expires_at: datetime | None = Field(default=None, sa_type=DateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=DateTime)


class UserRole(StrEnum):
    ADMIN = "admin"
    MEMBER = "member"


class AppUser(SQLModel, table=True):
    """A person who signs in (`user` is reserved in PostgreSQL). `username` is stored
    lower-cased; only an argon2 hash of the password is kept (db/passwords.py); none for a
    user made by single sign-on (`OidcIdentity`), whom the password form cannot sign in."""

    __tablename__ = "app_user"
    __table_args__ = (
        UniqueConstraint("username", name="uq_app_user_username"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    username: str
    display_name: str
    password_hash: str | None
    role: str = UserRole.MEMBER.value
    disabled: bool = False
    password_changed_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    last_login_at: datetime | None = Field(default=None, sa_type=DateTime)


class AuthSession(SQLModel, table=True):
    """A signed-in browser: only the SHA-256 of the cookie's token is stored. Ended by
    `revoked_at` (log out, a new password, a disabled user) or by `expires_at`."""

    __tablename__ = "auth_session"
    __table_args__ = (
        UniqueConstraint("token_hash", name="uq_auth_session_token_hash"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="app_user.id", ondelete="CASCADE", index=True)
    token_hash: str
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    last_seen_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    expires_at: datetime = Field(sa_type=DateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=DateTime)
    user_agent: str = ""
    address: str = ""


class LoginFailure(SQLModel, table=True):
    """A wrong password: counted per address and per username over a window, in the
    database so that every app process sees the same count (auth/rate_limit.py)."""

    __tablename__ = "login_failure"
    __table_args__ = (
        Index("ix_login_failure_address_at", "address", "at"),
        Index("ix_login_failure_username_at", "username", "at"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    address: str
    username: str
    at: datetime = Field(default_factory=utcnow, sa_type=DateTime)


class OidcIdentity(SQLModel, table=True):
    """A person at an OpenID provider (`issuer`, `subject`: the ID token's `iss`, `sub`) and
    the user they sign in as (db/oidc.py); never matched by email or username."""

    __tablename__ = "oidc_identity"
    __table_args__ = (
        UniqueConstraint("issuer", "subject", name="uq_oidc_identity_issuer_subject"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    issuer: str
    subject: str
    user_id: int = Field(foreign_key="app_user.id", ondelete="CASCADE", index=True)
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime)
    last_login_at: datetime | None = Field(default=None, sa_type=DateTime)


class OidcAttempt(SQLModel, table=True):
    """A sign-in that went to the provider: its `state`, `nonce` and PKCE verifier, bound to
    the browser by the SHA-256 of a random token in a short-lived cookie; taken (deleted) by
    the callback, so each is used once."""

    __tablename__ = "oidc_attempt"
    __table_args__ = (
        UniqueConstraint("token_hash", name="uq_oidc_attempt_token_hash"),
        {"extend_existing": True},
    )

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str
    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str
    next_path: str = "/"
    created_at: datetime = Field(default_factory=utcnow, sa_type=DateTime, index=True)
