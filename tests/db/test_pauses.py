"""Questions the agent asks back (run_pause)."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session

from agent_chat.db.models import ChatMessage, ChatSession
from agent_chat.db.pauses import (
    abandon_pauses,
    answer_pause,
    create_pause,
    open_pause,
    open_pauses_by_session,
)
from agent_chat.db.sessions import create_session
from tests.support.conversations import question_and_running_answer


@pytest.fixture
def answer(session: Session, chat: ChatSession) -> ChatMessage:
    return question_and_running_answer(session, chat, "run-1")


def test_create_pause_stores_the_question_and_is_idempotent(
    session: Session, answer: ChatMessage
) -> None:
    pause = create_pause(
        session=session,
        run_id="run-1",
        message_id=answer.id,
        clarify_id="c1",
        question="Which city?",
        choices=["Paris", "Zürich"],
    )
    assert (pause.status, pause.answer, pause.answered_at) == ("UNANSWERED", None, None)
    assert json.loads(pause.choices_json) == ["Paris", "Zürich"]
    again = create_pause(
        session=session,
        run_id="run-1",
        message_id=answer.id,
        clarify_id="c1",
        question="Which city? (re-delivered)",
        choices=[],
    )
    assert again.id == pause.id and again.question == "Which city?"
    assert open_pause(session=session, message_id=answer.id).id == pause.id


def test_answer_pause_answers_once_and_unknown_is_none(
    session: Session, answer: ChatMessage
) -> None:
    create_pause(
        session=session,
        run_id="run-1",
        message_id=answer.id,
        clarify_id="c1",
        question="?",
        choices=[],
    )
    answered = answer_pause(session=session, run_id="run-1", clarify_id="c1", answer="Paris")
    assert (answered.status, answered.answer) == ("ANSWERED", "Paris")
    assert answered.answered_at is not None
    second = answer_pause(session=session, run_id="run-1", clarify_id="c1", answer="Rome")
    assert second.answer == "Paris"  # the first answer wins
    assert open_pause(session=session, message_id=answer.id) is None
    assert answer_pause(session=session, run_id="run-1", clarify_id="nope", answer="x") is None
    assert answer_pause(session=session, run_id="nope", clarify_id="c1", answer="x") is None


def test_abandon_pauses_closes_only_the_runs_open_questions(
    session: Session, chat: ChatSession, answer: ChatMessage
) -> None:
    other = question_and_running_answer(session, chat, "run-2")
    for clarify_id in ("c1", "c2", "c3"):
        create_pause(
            session=session,
            run_id="run-1",
            message_id=answer.id,
            clarify_id=clarify_id,
            question="?",
            choices=[],
        )
    create_pause(
        session=session,
        run_id="run-2",
        message_id=other.id,
        clarify_id="c1",
        question="?",
        choices=[],
    )
    answer_pause(session=session, run_id="run-1", clarify_id="c1", answer="yes")
    assert abandon_pauses(session=session, run_id="run-1") == 2
    assert abandon_pauses(session=session, run_id="run-1") == 0
    assert open_pause(session=session, message_id=answer.id) is None
    assert open_pause(session=session, message_id=other.id) is not None
    abandoned = answer_pause(session=session, run_id="run-1", clarify_id="c2", answer="late")
    assert (abandoned.status, abandoned.answer) == ("ABANDONED", None)


def test_open_pauses_by_session_counts_unanswered_questions(session: Session, user: int) -> None:
    first, second, quiet = (create_session(user_id=user, session=session) for _ in range(3))
    a = question_and_running_answer(session, first, "run-a")
    b = question_and_running_answer(session, second, "run-b")
    question_and_running_answer(session, quiet, "run-q")
    for clarify_id in ("c1", "c2"):
        create_pause(
            session=session,
            run_id="run-a",
            message_id=a.id,
            clarify_id=clarify_id,
            question="?",
            choices=[],
        )
    create_pause(
        session=session, run_id="run-b", message_id=b.id, clarify_id="c1", question="?", choices=[]
    )
    answer_pause(session=session, run_id="run-b", clarify_id="c1", answer=None)
    assert open_pauses_by_session(user_id=user, session=session) == {first.id: 2}
