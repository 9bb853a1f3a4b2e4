"""The RUNNING answers are read through their partial index, not a scan of every message
(the takeover watch reads them every second on every worker)."""

from __future__ import annotations

from sqlalchemy import text
from sqlmodel import Session

from agent_chat.db.messages import append_message, finish_message, running_messages
from agent_chat.db.models import ChatSession, MessageRole, MessageStatus

BOUND = {"role": "ASSISTANT", "status": "RUNNING"}


def _plan(session: Session) -> str:
    # The statement running_messages() sends, its values bound as the app binds them.
    sql = "SELECT id FROM chat_message WHERE role = :role AND status = :status ORDER BY id"
    if session.get_bind().dialect.name == "sqlite":
        plan = text(f"EXPLAIN QUERY PLAN {sql}").bindparams(**BOUND)
        rows = session.exec(plan).all()  # type: ignore[call-overload]
        return " ".join(str(r[-1]) for r in rows)
    session.exec(text("SET LOCAL enable_seqscan = off"))  # type: ignore[call-overload]
    plan = text(f"EXPLAIN {sql}").bindparams(**BOUND)
    rows = session.exec(plan).all()  # type: ignore[call-overload]
    return " ".join(str(r[0]) for r in rows)


def test_running_messages_use_the_partial_index(session: Session, chat: ChatSession) -> None:
    question = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=None,
        role=MessageRole.USER,
        content="q",
        status=MessageStatus.SENT,
    )
    done = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=question.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
    )
    running = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=question.id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
    )
    finish_message(session=session, message_id=done.id, status=MessageStatus.SUCCESS, content="a")
    assert [m.id for m in running_messages(session=session)] == [running.id]
    assert "ix_chat_message_running" in _plan(session)
