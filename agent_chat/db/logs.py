"""Store functions for the persisted events of a run (`chat_message_log`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from agent_chat.db.models import ChatMessage, ChatMessageLog, ChatSession, utcnow
from agent_chat.protocol.events import EventType
from agent_chat.protocol.log_codec import LogRow

log = logging.getLogger(__name__)


def _insert_ignoring_duplicates(session: Session) -> Any:
    """INSERT that skips rows whose (message_id, seq) exists, where the dialect can say so."""
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        return sqlite.insert(ChatMessageLog).on_conflict_do_nothing(
            index_elements=["message_id", "seq"]
        )
    if dialect == "postgresql":
        return postgresql.insert(ChatMessageLog).on_conflict_do_nothing(
            index_elements=["message_id", "seq"]
        )
    # Other databases rely on the pre-check in append_logs (one writer per run).
    return insert(ChatMessageLog)


def append_logs(*, session: Session, message_id: int, rows: Sequence[LogRow]) -> int:
    """Store `rows` in one bulk insert, skipping seqs already stored; the number written.

    A re-delivered event (after a reconnect with Last-Event-ID) has a seq that is already
    stored: the existing seqs in the batch's range are read first, and the unique
    (message_id, seq) index with ON CONFLICT DO NOTHING also covers a concurrent writer.
    """
    if not rows:
        return 0
    low = min(row.seq for row in rows)
    high = max(row.seq for row in rows)
    existing = set(
        session.exec(
            select(ChatMessageLog.seq).where(
                ChatMessageLog.message_id == message_id,
                col(ChatMessageLog.seq).between(low, high),
            )
        ).all()
    )
    now = utcnow()
    values: list[dict[str, Any]] = []
    for row in rows:
        if row.seq in existing:
            continue
        existing.add(row.seq)  # a seq twice in one batch is stored once
        values.append(
            {
                "message_id": message_id,
                "seq": row.seq,
                "kind": row.kind,
                "content": row.content,
                "tool_name": row.tool_name,
                "meta_json": row.meta_json,
                "created_at": now,
            }
        )
    if len(values) < len(rows):
        log.debug(
            "Skipped %d already stored log rows of message %s", len(rows) - len(values), message_id
        )
    if values:
        session.execute(_insert_ignoring_duplicates(session), values)
    return len(values)


def list_logs(*, session: Session, message_id: int) -> list[ChatMessageLog]:
    query = (
        select(ChatMessageLog)
        .where(ChatMessageLog.message_id == message_id)
        .order_by(col(ChatMessageLog.seq))
    )
    return list(session.exec(query).all())


def owned_logs(*, session: Session, message_id: int, user_id: int) -> list[ChatMessageLog]:
    """`list_logs` for a person: empty when the message is not in one of `user_id`'s
    conversations (or does not exist)."""
    query = (
        select(ChatMessageLog)
        .join(ChatMessage, col(ChatMessage.id) == ChatMessageLog.message_id)
        .join(ChatSession, col(ChatSession.id) == ChatMessage.session_id)
        .where(ChatMessageLog.message_id == message_id, col(ChatSession.owner_id) == user_id)
        .order_by(col(ChatMessageLog.seq))
    )
    return list(session.exec(query).all())


def last_seq(*, session: Session, message_id: int) -> int:
    """The highest stored seq of the message, 0 if none."""
    query = select(func.max(ChatMessageLog.seq)).where(ChatMessageLog.message_id == message_id)
    return session.exec(query).one() or 0


@dataclass(frozen=True)
class RunStats:
    """What the folded thinking panel of a finished message says."""

    tools: int = 0
    todo_done: int = 0
    todo_total: int = 0
    thinking: bool = False  # reasoning, or text that came before tool calls

    @property
    def has_panel(self) -> bool:
        return bool(self.tools or self.todo_total or self.thinking)


def run_stats(*, session: Session, message_ids: Sequence[int]) -> dict[int, RunStats]:
    """Tool count and TODO progress per message, in two queries for any number of messages."""
    if not message_ids:
        return {}
    ids = list(message_ids)
    tool_counts: dict[int, int] = {}
    thinking: set[int] = set()
    for message_id, kind, count in session.exec(
        select(ChatMessageLog.message_id, ChatMessageLog.kind, func.count())
        .where(
            col(ChatMessageLog.message_id).in_(ids),
            col(ChatMessageLog.kind).in_(
                (EventType.TOOL_START, EventType.REASONING_DELTA, EventType.TEXT_BREAK)
            ),
        )
        .group_by(ChatMessageLog.message_id, ChatMessageLog.kind)
    ).all():
        if kind == EventType.TOOL_START:
            tool_counts[message_id] = count
        else:
            thinking.add(message_id)
    last_todo = (
        select(ChatMessageLog.message_id, func.max(ChatMessageLog.seq).label("seq"))
        .where(
            col(ChatMessageLog.message_id).in_(ids), ChatMessageLog.kind == EventType.TODO_UPDATE
        )
        .group_by(ChatMessageLog.message_id)
        .subquery()
    )
    todo_rows = session.exec(
        select(ChatMessageLog.message_id, ChatMessageLog.meta_json).join(
            last_todo,
            (ChatMessageLog.message_id == last_todo.c.message_id)
            & (ChatMessageLog.seq == last_todo.c.seq),
        )
    ).all()
    todos: dict[int, tuple[int, int]] = {}
    for message_id, meta_json in todo_rows:
        try:
            items = json.loads(meta_json or "{}").get("todos") or []
        except ValueError:
            items = []
        live = [t for t in items if isinstance(t, dict) and t.get("status") != "cancelled"]
        todos[message_id] = (sum(1 for t in live if t.get("status") == "completed"), len(live))
    return {
        mid: RunStats(tool_counts.get(mid, 0), *todos.get(mid, (0, 0)), thinking=mid in thinking)
        for mid in ids
        if mid in tool_counts or mid in todos or mid in thinking
    }
