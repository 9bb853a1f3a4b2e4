"""A scheduled firing that could not start, shown where its answer would have been: the
prompt and a FAILED answer saying why, in the conversation it made or adds to, which is
marked unread and as the schedule's, so the person finds it in the sidebar (not only in the
schedule's history)."""

from __future__ import annotations

from sqlmodel import Session

from agent_chat.db import messages
from agent_chat.db.models import ChatSession, MessageRole, MessageStatus, utcnow
from agent_chat.db.schedules import record_outcome


def record_unstarted(
    *,
    session: Session,
    chat_id: int,
    run_id: int,
    schedule_id: int,
    text: str,
    error: str,
) -> int:
    """The failed turn at the end of the conversation's active branch, and the firing's
    outcome pointing at it; the answer's id."""
    branch = messages.active_branch(session=session, chat_session_id=chat_id)
    question = messages.append_message(
        session=session,
        chat_session_id=chat_id,
        parent_id=branch[-1].id if branch else None,
        role=MessageRole.USER,
        content=text,
        status=MessageStatus.SENT,
    )
    answer = messages.append_message(
        session=session,
        chat_session_id=chat_id,
        parent_id=question.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.FAILED,
    )
    answer.error = f"This scheduled run could not start: {error}"
    answer.completed_at = utcnow()
    chat = session.get(ChatSession, chat_id)
    if chat is not None:
        chat.unread = True
        chat.schedule_id = schedule_id
        session.add(chat)
    session.add(answer)
    session.flush()
    record_outcome(
        session=session, run_id=run_id, session_id=chat_id, message_id=answer.id, error=error
    )
    return answer.id or 0
