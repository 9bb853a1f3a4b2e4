"""What the memory drawer shows of one conversation.

- working memory: exactly what the next run would send (`history_for` under the leaf of the
  active branch), with a rough token estimate;
- short-term: the newest tool calls on the active branch, rebuilt from `chat_message_log`
  through the same reducer as the thinking panel;
- medium-term: the session's summaries (SYSTEM messages with status SUMMARY), newest first;
- statistics for the whole tree.

Long-term memory (MEMORY.md / USER.md) lives in the bridge, not here.

The number of queries does not depend on the conversation's length (six in all).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import case, func
from sqlmodel import Session, col, select

from agent_chat.db.messages import active_branch, history_for
from agent_chat.db.models import ChatMessage, ChatMessageLog, MessageRole, MessageStatus
from agent_chat.db.sessions import get_session
from agent_chat.protocol.events import EventType
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import RunView, ToolCall, apply

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and OpenAI-style tokenizers
TOOL_KINDS = (EventType.TOOL_START, EventType.TOOL_END)
SUMMARY_LIMIT = 50


def estimate_tokens(chars: int) -> int:
    """A rough token count for `chars` characters (characters ÷ 4, rounded up)."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of an assistant message on the active branch."""

    message_id: int
    call: ToolCall
    started_at: datetime | None = None


@dataclass(frozen=True)
class SummaryRecord:
    message_id: int
    content: str
    created_at: datetime


@dataclass(frozen=True)
class MemoryStats:
    branch_messages: int  # messages on the active branch
    tree_messages: int  # messages in the whole tree (every version)
    tokens_used: int  # sum of the assistant messages' total_tokens, whole tree
    compressions: int  # SUMMARY messages in the session
    last_compression_at: datetime | None


@dataclass
class MemorySnapshot:
    session_uuid: str
    title: str
    working: list[dict[str, str]]  # what the next run sends as history, oldest first
    tools: list[ToolCallRecord]  # newest first
    summaries: list[SummaryRecord]  # newest first
    stats: MemoryStats
    working_chars: int = field(init=False)

    def __post_init__(self) -> None:
        self.working_chars = sum(len(m["content"]) for m in self.working)

    @property
    def working_tokens(self) -> int:
        return estimate_tokens(self.working_chars)


def memory_snapshot(
    *, session: Session, session_uuid: str, user_id: int, tool_limit: int = 20
) -> MemorySnapshot | None:
    """The drawer's data for `user_id`'s session with this uuid; None if there is no such
    session (or it is another person's)."""
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        return None
    branch = active_branch(session=session, chat_session_id=chat.id)
    leaf = branch[-1].id if branch else None
    working = history_for(session=session, chat_session_id=chat.id, parent_id=leaf)
    assistant_ids = [m.id for m in branch if m.role == MessageRole.ASSISTANT.value]
    return MemorySnapshot(
        session_uuid=chat.session_uuid,
        title=chat.title,
        working=working,
        tools=recent_tool_calls(session=session, message_ids=assistant_ids, limit=tool_limit),
        summaries=session_summaries(session=session, chat_session_id=chat.id),
        stats=_stats(session, chat.id, branch_messages=len(branch)),
    )


def recent_tool_calls(
    *, session: Session, message_ids: list[int], limit: int = 20
) -> list[ToolCallRecord]:
    """The newest `limit` tool calls of these messages, newest first, in one query.

    Messages on one branch are created parent before child, so their ids grow along the
    branch. A scalar subquery finds the message holding the `limit`-th newest `tool_start`;
    only the tool rows of that message and newer ones are read. Starts and ends are paired by
    the thinking panel's reducer, so both views agree.
    """
    if not message_ids or limit <= 0:
        return []
    in_messages = col(ChatMessageLog.message_id).in_(message_ids)
    cutoff = (
        select(ChatMessageLog.message_id)
        .where(in_messages, ChatMessageLog.kind == EventType.TOOL_START)
        .order_by(col(ChatMessageLog.message_id).desc(), col(ChatMessageLog.seq).desc())
        .offset(limit - 1)
        .limit(1)
        .scalar_subquery()
    )
    rows = session.exec(
        select(
            ChatMessageLog.message_id,
            ChatMessageLog.seq,
            ChatMessageLog.kind,
            ChatMessageLog.content,
            ChatMessageLog.meta_json,
            ChatMessageLog.created_at,
        )
        .where(
            in_messages,
            col(ChatMessageLog.kind).in_(TOOL_KINDS),
            col(ChatMessageLog.message_id) >= func.coalesce(cutoff, 0),
        )
        .order_by(col(ChatMessageLog.message_id), col(ChatMessageLog.seq))
    ).all()
    views: dict[int, RunView] = {}
    started: dict[tuple[int, str], datetime] = {}
    for message_id, seq, kind, content, meta_json, created_at in rows:
        event: dict[str, Any] = row_to_event(seq, kind, content, meta_json)
        view = apply(views.get(message_id, RunView()), event)
        views[message_id] = view
        if kind == EventType.TOOL_START and view.tools:
            started[(message_id, view.tools[-1].call_id)] = created_at
    records: list[ToolCallRecord] = []
    for message_id in sorted(views, reverse=True):
        for call in reversed(views[message_id].tools):
            records.append(
                ToolCallRecord(message_id, call, started.get((message_id, call.call_id)))
            )
    return records[:limit]


def session_summaries(
    *, session: Session, chat_session_id: int, limit: int = SUMMARY_LIMIT
) -> list[SummaryRecord]:
    """The session's summaries (every branch), newest first."""
    query = (
        select(ChatMessage.id, ChatMessage.content, ChatMessage.created_at)
        .where(
            ChatMessage.session_id == chat_session_id,
            ChatMessage.role == MessageRole.SYSTEM.value,
            ChatMessage.status == MessageStatus.SUMMARY.value,
        )
        .order_by(col(ChatMessage.created_at).desc(), col(ChatMessage.id).desc())
        .limit(limit)
    )
    return [SummaryRecord(mid, content, created) for mid, content, created in session.exec(query)]


def _stats(session: Session, chat_session_id: int, *, branch_messages: int) -> MemoryStats:
    is_summary = (ChatMessage.role == MessageRole.SYSTEM.value) & (
        ChatMessage.status == MessageStatus.SUMMARY.value
    )
    is_assistant = ChatMessage.role == MessageRole.ASSISTANT.value
    total, tokens, compressions, last = session.exec(
        select(
            func.count(),
            func.coalesce(func.sum(case((is_assistant, ChatMessage.total_tokens), else_=0)), 0),
            func.coalesce(func.sum(case((is_summary, 1), else_=0)), 0),
            func.max(case((is_summary, ChatMessage.created_at), else_=None)),
        ).where(ChatMessage.session_id == chat_session_id)
    ).one()
    return MemoryStats(
        branch_messages=branch_messages,
        tree_messages=int(total),
        tokens_used=int(tokens),
        compressions=int(compressions),
        last_compression_at=last,
    )
