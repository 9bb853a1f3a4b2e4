"""Store rows as API bodies (`schemas`). Nothing here reads the database."""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from agent_chat.api.schemas import (
    LogOut,
    MessageOut,
    ModelOut,
    PendingOut,
    SessionOut,
    SkillOut,
    VersionOut,
    attachment_out,
)
from agent_chat.db.attachment_models import Attachment
from agent_chat.db.models import ChatMessage, ChatMessageLog, ChatSession, ModelConfig, RunPause
from agent_chat.protocol.log_codec import stored_event
from agent_chat.skills import Skill

PREVIEW_CHARS = 120


def session_out(
    chat: ChatSession, *, state: str = "", waiting: bool = False, preview: str | None = None
) -> SessionOut:
    return SessionOut(
        id=chat.session_uuid,
        title=chat.title,
        model_id=chat.model_id,
        skill_folder=chat.skill_folder,
        status=chat.status,
        created_at=chat.created_at,
        last_message_at=chat.last_message_at,
        last_message_preview=preview,
        has_active_run=state in ("running", "waiting"),
        waiting=state == "waiting" or waiting,
        unread=chat.unread,
        pinned=chat.pinned_at is not None,
        folder_id=chat.folder_id,
    )


def log_out(row: ChatMessageLog) -> LogOut:
    event = stored_event(row.seq, row.kind, row.content, row.meta_json)
    return LogOut(seq=event.seq, seq_from=row.seq, type=event.type, data=event.data)


def message_out(
    message: ChatMessage,
    *,
    version: tuple[int, int] = (1, 1),
    logs: list[ChatMessageLog] | None = None,
    files: list[Attachment] | None = None,
) -> MessageOut:
    return MessageOut(
        id=message.id,
        parent_id=message.parent_id,
        role=message.role,
        content=message.content,
        status=message.status,
        run_id=message.run_id,
        model_id=message.model_id,
        skill_folder=message.skill_folder,
        error=message.error,
        created_at=message.created_at,
        completed_at=message.completed_at,
        input_tokens=message.input_tokens,
        output_tokens=message.output_tokens,
        total_tokens=message.total_tokens,
        context_tokens=message.context_tokens,
        version=version[0],
        version_count=version[1],
        attachments=[attachment_out(f) for f in files or []],
        logs=[log_out(r) for r in logs] if logs is not None else None,
    )


def version_out(message: ChatMessage) -> VersionOut:
    return VersionOut(
        message_id=message.id,
        branch_order=message.branch_order,
        is_active=message.is_active,
        created_at=message.created_at,
        status=message.status,
        preview=" ".join(message.content.split())[:PREVIEW_CHARS],
    )


def pending_out(pause: RunPause) -> PendingOut:
    try:
        choices = [str(c) for c in json.loads(pause.choices_json or "[]")]
    except ValueError:
        choices = []
    return PendingOut(
        kind=pause.kind or "clarify",
        clarify_id=pause.clarify_id,
        question=pause.question,
        detail=pause.detail,
        choices=choices,
        created_at=pause.created_at,
    )


def public_url(url: str) -> str:
    """The URL without user:password (an endpoint may carry credentials in it)."""
    parts = urlsplit(url)
    if not (parts.username or parts.password):
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def model_out(model: ModelConfig) -> ModelOut:
    return ModelOut(
        id=model.id,
        name=model.name,
        model=model.model_name,
        base_url=public_url(model.base_url),
        context_length=model.context_length,
        is_default=model.is_default,
        has_api_key=bool(model.api_key),
        supports_images=model.supports_images,
    )


def skill_out(skill: Skill) -> SkillOut:
    return SkillOut(
        folder_name=skill.folder,
        name=skill.name,
        description=skill.description,
        valid=skill.valid,
        error=skill.error,
    )
