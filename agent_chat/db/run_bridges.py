"""Which bridge each run went to (`chat_message.bridge_url`, several bridges:
runs/bridges.py). Any worker reads a run's bridge here, not from its own memory; NULL is
the first bridge (rows from before the column)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import update
from sqlmodel import Session, col, select

from agent_chat.db.models import ChatMessage, ChatSession, MessageRole


@dataclass(frozen=True)
class PinnedRun:
    message_id: int
    status: str
    bridge_url: str | None


def last_run_bridge(*, session: Session, session_uuid: str) -> str | None:
    """The bridge of the conversation's newest run (None: none yet, or the first bridge)."""
    query = (
        select(ChatMessage.bridge_url)
        .join(ChatSession, col(ChatSession.id) == col(ChatMessage.session_id))
        .where(
            ChatSession.session_uuid == session_uuid,
            ChatMessage.role == MessageRole.ASSISTANT.value,
            col(ChatMessage.run_id).is_not(None),
        )
        .order_by(col(ChatMessage.id).desc())
        .limit(1)
    )
    return session.exec(query).first()


def pin_run(*, session: Session, message_id: int, bridge_url: str) -> None:
    """Store the bridge the answer's run is sent to (before it is sent)."""
    session.exec(
        update(ChatMessage).where(col(ChatMessage.id) == message_id).values(bridge_url=bridge_url)
    )


def pinned_run(*, session: Session, run_id: str) -> PinnedRun | None:
    """The answer of a run: its status and its bridge; None for an unknown run."""
    query = (
        select(ChatMessage.id, ChatMessage.status, ChatMessage.bridge_url)
        .where(ChatMessage.run_id == run_id)
        .order_by(col(ChatMessage.id).desc())
        .limit(1)
    )
    row = session.exec(query).first()
    return PinnedRun(row[0], row[1], row[2]) if row is not None else None
