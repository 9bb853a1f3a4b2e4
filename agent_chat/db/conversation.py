"""What the chat page shows of one session, read in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.branch import branch_select, single_path
from agent_chat.db.logs import RunStats, run_stats
from agent_chat.db.messages import active_branch, versions_of_branch
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, ModelConfig, QueuedMessage
from agent_chat.db.queue import list_queued
from agent_chat.db.sessions import get_session

# What the page needs of every message of the branch, not only of those it shows. Whole
# messages cost ~25 µs each to make (a 20,000-message branch: half a second per page load).
OUTLINE = (
    ChatMessage.id,
    ChatMessage.parent_id,
    ChatMessage.branch_order,
    ChatMessage.role,
    ChatMessage.tool_profile,
    ChatMessage.model_id,
    ChatMessage.input_tokens,
    ChatMessage.output_tokens,
)


@dataclass
class Conversation:
    chat: ChatSession
    messages: list[ChatMessage]  # the newest `limit` messages of the active branch
    total: int  # messages on the active branch
    stats: dict[int, RunStats] = field(default_factory=dict)
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    # The whole active branch: whole messages when all are shown (`limit` 0), else rows of
    # the OUTLINE columns (the usage meter's and the workspace footers' fields).
    branch: list[Any] = field(default_factory=list)
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
    if limit > 0:
        branch = single_path(list(session.exec(branch_select(chat.id, *OUTLINE)).all()))
        shown = _whole(session, [m.id for m in branch[-limit:]])
    else:
        branch = shown = active_branch(session=session, chat_session_id=chat.id)
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


def _whole(session: Session, ids: list[int]) -> list[ChatMessage]:
    """The messages `ids`, in that order (none is ever deleted)."""
    found = session.exec(select(ChatMessage).where(col(ChatMessage.id).in_(ids))).all()
    by_id = {m.id: m for m in found}
    return [by_id[i] for i in ids if i in by_id]
