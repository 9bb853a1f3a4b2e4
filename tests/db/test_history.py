"""The context sent to the agent (`history_for`)."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from agent_chat.db.errors import InvalidTree
from agent_chat.db.messages import FAILED_NOTE, STOPPED_NOTE, append_message, history_for
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus
from agent_chat.db.sessions import create_session


def _chain(
    session: Session, chat: ChatSession, *specs: tuple[str, str, str], parent: int | None = None
) -> list[ChatMessage]:
    """Append (role, status, content) messages one under the other."""
    added = []
    for role, status, content in specs:
        message = append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=parent,
            role=role,
            content=content,
            status=status,
        )
        added.append(message)
        parent = message.id
    return added


def test_history_is_the_branch_up_to_and_including_the_parent(
    session: Session, chat: ChatSession
) -> None:
    q1, a1, q2, a2 = _chain(
        session,
        chat,
        ("USER", "SENT", "q1"),
        ("ASSISTANT", "SUCCESS", "a1"),
        ("USER", "SENT", "q2"),
        ("ASSISTANT", "SUCCESS", "a2"),
    )
    assert history_for(session=session, chat_session_id=chat.id, parent_id=q2.id) == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    assert history_for(session=session, chat_session_id=chat.id, parent_id=None) == []


def test_history_is_the_branch_as_shown_with_notes_for_answers_that_never_came(
    session: Session, chat: ChatSession
) -> None:
    *earlier, last = _chain(
        session,
        chat,
        ("USER", "SENT", "q1"),
        ("ASSISTANT", "FAILED", "partial before the error"),
        ("USER", "SENT", "q2"),
        ("ASSISTANT", "STOPPED", "half an answer"),
        ("USER", "SENT", "q3"),
        ("ASSISTANT", "STOPPED", ""),
        ("USER", "SENT", "q4"),
        ("ASSISTANT", "RUNNING", "streaming"),
    )
    failed = next(m for m in earlier if m.status == "FAILED")
    failed.error = "the model broke"
    session.add(failed)
    session.flush()
    # No two user turns follow each other (hermes would join them into one question).
    assert history_for(session=session, chat_session_id=chat.id, parent_id=last.id) == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": FAILED_NOTE.format(error="the model broke")},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "half an answer"},
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": STOPPED_NOTE},
        {"role": "user", "content": "q4"},
    ]


def test_a_reset_marker_cuts_everything_before_it(session: Session, chat: ChatSession) -> None:
    *_, last = _chain(
        session,
        chat,
        ("USER", "SENT", "forgotten"),
        ("ASSISTANT", "SUCCESS", "forgotten too"),
        ("SYSTEM", "RESET", "Conversation reset"),
        ("USER", "SENT", "fresh start"),
    )
    assert history_for(session=session, chat_session_id=chat.id, parent_id=last.id) == [
        {"role": "user", "content": "fresh start"}
    ]


def test_a_summary_stands_for_what_came_before_the_turn_it_was_made_in(
    session: Session, chat: ChatSession
) -> None:
    *_, last = _chain(
        session,
        chat,
        ("USER", "SENT", "old question"),
        ("ASSISTANT", "SUCCESS", "old answer"),
        ("USER", "SENT", "question of the compacting run"),
        ("ASSISTANT", "SUCCESS", "its answer"),
        ("SYSTEM", "SUMMARY", "They talked about X."),
        ("USER", "SENT", "new question"),
    )
    assert history_for(session=session, chat_session_id=chat.id, parent_id=last.id) == [
        {"role": "user", "content": "[Summary of the earlier conversation]\nThey talked about X."},
        {"role": "user", "content": "question of the compacting run"},
        {"role": "assistant", "content": "its answer"},
        {"role": "user", "content": "new question"},
    ]


def test_the_latest_of_reset_and_summary_wins(session: Session, chat: ChatSession) -> None:
    summary_then_reset = _chain(
        session,
        chat,
        ("USER", "SENT", "a"),
        ("SYSTEM", "SUMMARY", "sum 1"),
        ("USER", "SENT", "b"),
        ("SYSTEM", "RESET", ""),
        ("USER", "SENT", "c"),
        ("SYSTEM", "SUMMARY", "sum 2"),
        ("ASSISTANT", "SUCCESS", "d"),
    )
    # The turn before "sum 2" stops at the reset: only "c" is kept verbatim.
    assert history_for(
        session=session, chat_session_id=chat.id, parent_id=summary_then_reset[-1].id
    ) == [
        {"role": "user", "content": "[Summary of the earlier conversation]\nsum 2"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    # Up to the reset marker itself: nothing before it is sent.
    assert (
        history_for(session=session, chat_session_id=chat.id, parent_id=summary_then_reset[3].id)
        == []
    )


def test_history_for_an_edit_follows_the_branch_being_continued(
    session: Session, chat: ChatSession
) -> None:
    q1, a1, q2_old = _chain(
        session,
        chat,
        ("USER", "SENT", "q1"),
        ("ASSISTANT", "SUCCESS", "a1"),
        ("USER", "SENT", "q2 old"),
    )
    _chain(session, chat, ("ASSISTANT", "SUCCESS", "answer to old"), parent=q2_old.id)
    # Editing q2 adds a sibling under a1; its answer gets the context up to the new q2.
    (q2_new,) = _chain(session, chat, ("USER", "SENT", "q2 new"), parent=a1.id)
    assert history_for(session=session, chat_session_id=chat.id, parent_id=q2_new.id) == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2 new"},
    ]


def test_history_for_a_parent_of_another_session_is_an_error(
    session: Session, chat: ChatSession, user: int
) -> None:
    other = create_session(user_id=user, session=session)
    (foreign,) = _chain(session, other, ("USER", "SENT", "x"))
    with pytest.raises(InvalidTree):
        history_for(session=session, chat_session_id=chat.id, parent_id=foreign.id)
    with pytest.raises(InvalidTree):
        history_for(session=session, chat_session_id=chat.id, parent_id=999_999)


def test_history_roles_accept_enum_members(session: Session, chat: ChatSession) -> None:
    (q,) = _chain(session, chat, (MessageRole.USER, MessageStatus.SENT, "hello"))
    assert history_for(session=session, chat_session_id=chat.id, parent_id=q.id) == [
        {"role": "user", "content": "hello"}
    ]
