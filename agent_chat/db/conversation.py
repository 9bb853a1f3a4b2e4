"""What the chat page shows of one session, read in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import Session, select

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.logs import RunStats, run_stats
from agent_chat.db.messages import active_branch, versions_of_branch
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, ModelConfig, QueuedMessage
from agent_chat.db.queue import list_queued
from agent_chat.db.sessions import get_session


@dataclass
class Conversation:
    chat: ChatSession
    messages: list[ChatMessage]  # the newest `limit` messages of the active branch
    total: int  # messages on the active branch
    stats: dict[int, RunStats] = field(default_factory=dict)
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    branch: list[ChatMessage] = field(default_factory=list)  # the whole active branch
    models: dict[int, ModelConfig] = field(default_factory=dict)  # by id (prices, windows)
    model: ModelConfig | None = None  # the model the next answer uses
    queued: list[QueuedMessage] = field(default_factory=list)  # sent when the run ends
    files: dict[int, list[Attachment]] = field(default_factory=dict)  # a user message's

    @property
    def has_earlier(self) -> bool:
        return self.total > len(self.messages)


def load_conversation(
    *, session: Session, session_uuid: str, user_id: int, limit: int
) -> Conversation | None:
    """The active branch's newest `limit` messages with their run stats and versions; None
    for a missing conversation or another person's."""
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        return None
    branch = active_branch(session=session, chat_session_id=chat.id)
    shown = branch[-limit:] if limit > 0 else branch
    assistant_ids = [m.id for m in shown if m.role == MessageRole.ASSISTANT.value]
    user_ids = [m.id for m in shown if m.role == MessageRole.USER.value and m.id is not None]
    models = {m.id: m for m in session.exec(select(ModelConfig)).all() if m.id is not None}
    return Conversation(
        chat=chat,
        messages=shown,
        total=len(branch),
        stats=run_stats(session=session, message_ids=assistant_ids),
        versions=versions_of_branch(session=session, chat_session_id=chat.id, branch=shown),
        branch=branch,
        queued=list_queued(session=session, session_uuid=session_uuid, user_id=user_id),
        files=message_attachments(session=session, message_ids=user_ids),
        models=models,
        model=models.get(chat.model_id or 0)
        or next((m for m in models.values() if m.is_default), None),
    )
