"""Conversations built straight in the store, for tests that need rows to work on."""

from __future__ import annotations

from sqlmodel import Session

from agent_chat.db.messages import append_message
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus


def question_and_running_answer(
    session: Session, chat: ChatSession, run_id: str = "run-1", *, question: str = "q"
) -> ChatMessage:
    """A first question in `chat` and its answer, RUNNING under `run_id`; returns the answer
    (its ``parent_id`` is the question)."""
    user = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=None,
        role=MessageRole.USER,
        content=question,
        status=MessageStatus.SENT,
    )
    return append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=user.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
        run_id=run_id,
    )
