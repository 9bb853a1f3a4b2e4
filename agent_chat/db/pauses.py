"""Store functions for questions the agent asks back (`run_pause`)."""

from __future__ import annotations

import json

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from agent_chat.db.models import ChatMessage, ChatSession, PauseStatus, RunPause, utcnow


def _find(session: Session, run_id: str, clarify_id: str) -> RunPause | None:
    query = select(RunPause).where(RunPause.run_id == run_id, RunPause.clarify_id == clarify_id)
    return session.exec(query).first()


def create_pause(
    *,
    session: Session,
    run_id: str,
    message_id: int,
    clarify_id: str,
    question: str,
    choices: list[str],
    kind: str = "clarify",
    detail: str | None = None,
) -> RunPause:
    """Record a question (or an approval: `question` is the command, `detail` the danger);
    a re-delivered event returns the existing row unchanged."""
    existing = _find(session, run_id, clarify_id)
    if existing is not None:
        return existing
    pause = RunPause(
        run_id=run_id,
        message_id=message_id,
        clarify_id=clarify_id,
        kind=kind,
        question=question,
        detail=detail,
        choices_json=json.dumps(list(choices), ensure_ascii=False),
    )
    session.add(pause)
    session.flush()
    return pause


def answer_pause(
    *, session: Session, run_id: str, clarify_id: str, answer: str | None
) -> RunPause | None:
    """Answer an open question. None if there is no such question.

    Only an UNANSWERED pause changes: the first answer wins, and an answered or abandoned
    pause is returned as it is (the caller tells the user from its `status`).
    """
    pause = _find(session, run_id, clarify_id)
    if pause is None or pause.status != PauseStatus.UNANSWERED.value:
        return pause
    pause.status = PauseStatus.ANSWERED.value
    pause.answer = answer
    pause.answered_at = utcnow()
    session.add(pause)
    session.flush()
    return pause


def abandon_pauses(*, session: Session, run_id: str) -> int:
    """Close the run's open questions (the run ended or was lost); how many were open."""
    result = session.execute(
        update(RunPause)
        .where(RunPause.run_id == run_id, RunPause.status == PauseStatus.UNANSWERED.value)
        .values(status=PauseStatus.ABANDONED.value)
    )
    return result.rowcount or 0


def open_pause(*, session: Session, message_id: int) -> RunPause | None:
    """The newest unanswered question of an assistant message."""
    query = (
        select(RunPause)
        .where(RunPause.message_id == message_id, RunPause.status == PauseStatus.UNANSWERED.value)
        .order_by(col(RunPause.id).desc())
    )
    return session.exec(query).first()


def open_pauses_by_session(*, session: Session, user_id: int) -> dict[int, int]:
    """`user_id`'s chat session id → number of unanswered questions (the sidebar's
    "waiting" badge)."""
    query = (
        select(ChatMessage.session_id, func.count(col(RunPause.id)))
        .join(ChatMessage, col(ChatMessage.id) == RunPause.message_id)
        .join(ChatSession, col(ChatSession.id) == ChatMessage.session_id)
        .where(
            RunPause.status == PauseStatus.UNANSWERED.value, col(ChatSession.owner_id) == user_id
        )
        .group_by(col(ChatMessage.session_id))
    )
    return {session_id: count for session_id, count in session.exec(query).all()}
