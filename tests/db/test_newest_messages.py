"""The first paint's read (`conversation.load_newest`): only the newest messages of the active
branch, the same ones the page's full read (`load_conversation`) shows, for branched trees
(regenerated answers, edited questions, an older version chosen again) and when the
one-active-sibling rule was broken."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update
from sqlmodel import Session, col

from agent_chat.db.conversation import load_conversation, load_newest
from agent_chat.db.messages import set_active, switch_version
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole
from agent_chat.db.sessions import create_session
from tests.support.conversations import (
    RANDOM_EDITS,
    add_message,
    random_tree,
    recorded_statements,
)

USER, ASSISTANT = MessageRole.USER, MessageRole.ASSISTANT


def _same_as_full_read(session: Session, chat: ChatSession, user: int, limit: int) -> list[int]:
    full = load_conversation(
        session=session, session_uuid=chat.session_uuid, user_id=user, limit=limit
    )
    newest = load_newest(session=session, session_uuid=chat.session_uuid, user_id=user, limit=limit)
    assert full is not None and newest is not None
    assert [m.id for m in newest.messages] == [m.id for m in full.messages]
    assert [m.content for m in newest.messages] == [m.content for m in full.messages]
    assert (newest.total, newest.has_earlier) == (full.total, full.has_earlier)
    return [m.id for m in newest.messages]


def test_regenerated_edited_and_switched_back_versions(
    session: Session, chat: ChatSession, user: int
) -> None:
    question = add_message(session, chat, None, content="q1")
    first = add_message(session, chat, question, role=ASSISTANT, content="a1 v1")
    follow_up = add_message(session, chat, first, content="q2 under v1")  # the old answer's own
    second = add_message(session, chat, question, role=ASSISTANT, content="a1 v2")  # regenerated
    edited = add_message(session, chat, second, content="q2 v1")
    edit = add_message(session, chat, second, content="q2 v2")  # the question edited
    answer = add_message(session, chat, edit, role=ASSISTANT, content="a2")
    assert _same_as_full_read(session, chat, user, 3) == [second.id, edit.id, answer.id]
    assert _same_as_full_read(session, chat, user, 50) == [
        question.id,
        second.id,
        edit.id,
        answer.id,
    ]

    # The older version chosen again: the newest message is now off the active branch.
    switch_version(session=session, message_id=edit.id, user_id=user, step=-1)
    assert _same_as_full_read(session, chat, user, 2) == [second.id, edited.id]
    set_active(session=session, message_id=first.id, user_id=user)
    assert _same_as_full_read(session, chat, user, 4)[-2:] == [first.id, follow_up.id]


def test_an_empty_conversation_and_another_persons(
    other_user: int, session: Session, chat: ChatSession, user: int
) -> None:
    empty = load_newest(session=session, session_uuid=chat.session_uuid, user_id=user, limit=4)
    assert empty is not None and (empty.messages, empty.total, empty.has_earlier) == ([], 0, False)
    add_message(session, chat, None)
    for uuid, who in ((chat.session_uuid, other_user), ("not-a-uuid", user)):
        assert load_newest(session=session, session_uuid=uuid, user_id=who, limit=4) is None


def test_two_active_siblings_are_followed_like_the_full_read(
    session: Session, chat: ChatSession, user: int
) -> None:
    """If the rule was ever broken, both reads follow the newest active sibling."""
    question = add_message(session, chat, None)
    old = add_message(session, chat, question, role=ASSISTANT, content="old")
    add_message(session, chat, old, content="under old")
    add_message(session, chat, old, content="under old, newer")
    new = add_message(session, chat, question, role=ASSISTANT, content="new")
    under_new = add_message(session, chat, new, content="under new")
    session.execute(update(ChatMessage).where(col(ChatMessage.id) == old.id).values(is_active=True))
    session.flush()
    session.expire_all()
    assert _same_as_full_read(session, chat, user, 2) == [new.id, under_new.id]


def test_the_walk_stays_in_the_database(session: Session, chat: ChatSession, user: int) -> None:
    """Three statements whatever the branch's length: the session, the newest ids, their
    messages."""
    parent = None
    for i in range(60):
        parent = add_message(session, chat, parent, role=USER if i % 2 == 0 else ASSISTANT)
    session.expunge_all()
    with recorded_statements(session.get_bind()) as statements:
        view = load_newest(session=session, session_uuid=chat.session_uuid, user_id=user, limit=4)
    assert view is not None and (len(view.messages), view.total) == (4, 60)
    assert len(statements) == 3


@settings(
    max_examples=40,
    deadline=None,
    # One database for all examples; each example works in a chat session of its own.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=RANDOM_EDITS, limit=st.integers(min_value=1, max_value=6))
def test_random_trees_give_the_full_reads_newest(
    session: Session, ops: list[tuple[str, int | None]], limit: int, user: int
) -> None:
    chat = create_session(user_id=user, session=session)
    random_tree(session, chat, user, ops)
    session.expire_all()  # read what is stored, not what is cached
    _same_as_full_read(session, chat, user, limit)
