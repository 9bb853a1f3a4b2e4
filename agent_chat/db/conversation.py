"""What the chat page shows of one session, read in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sqlmodel import Session, col, select

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.branch import branch_select, newest_ids, single_path
from agent_chat.db.logs import RunStats, run_stats
from agent_chat.db.messages import active_branch, versions_of_branch
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, ModelConfig, QueuedMessage
from agent_chat.db.queue import list_queued
from agent_chat.db.sessions import get_session


class BranchEntry(NamedTuple):
    """What the page needs of every message of the branch, not only of those it shows (the
    usage meter, the workspace footers). Whole messages cost ~25 µs each to make (a
    20,000-message branch: half a second per page load); SQLAlchemy rows are slow to read
    by attribute, a tuple is not."""

    id: int
    parent_id: int | None
    branch_order: int
    role: str
    tool_profile: str | None
    model_id: int | None
    input_tokens: int | None
    output_tokens: int | None
    context_tokens: int | None


OUTLINE = tuple(getattr(ChatMessage, name) for name in BranchEntry._fields)


@dataclass
class Conversation:
    chat: ChatSession
    messages: list[ChatMessage]  # the newest `limit` messages of the active branch
    total: int  # messages on the active branch
    stats: dict[int, RunStats] = field(default_factory=dict)
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)
    # The whole active branch: whole messages when all are shown (`limit` 0), else entries.
    branch: list[ChatMessage] | list[BranchEntry] = field(default_factory=list)
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
        # Through the connection: plain rows, none of the ORM's per-row work.
        rows = session.connection().execute(branch_select(chat.id, *OUTLINE)).all()
        branch = single_path([BranchEntry(*row) for row in rows])
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


@dataclass
class Newest:
    """The newest messages of a conversation's active branch, nothing else (the first paint)."""

    chat: ChatSession
    messages: list[ChatMessage]
    total: int  # messages on the active branch

    @property
    def has_earlier(self) -> bool:
        return self.total > len(self.messages)


def load_newest(*, session: Session, session_uuid: str, user_id: int, limit: int) -> Newest | None:
    """The active branch's newest `limit` messages, the same as `load_conversation`'s, without
    reading the rest of the branch; None for a missing conversation or another person's."""
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None or chat.id is None:
        return None
    ids, total = newest_ids(session=session, chat_session_id=chat.id, limit=limit)
    return Newest(chat=chat, messages=_whole(session, ids), total=total)


def _whole(session: Session, ids: list[int]) -> list[ChatMessage]:
    """The messages `ids`, in that order (none is ever deleted)."""
    found = session.exec(select(ChatMessage).where(col(ChatMessage.id).in_(ids))).all()
    by_id = {m.id: m for m in found}
    return [by_id[i] for i in ids if i in by_id]
