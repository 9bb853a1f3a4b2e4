"""The message tree: append, active branch, versions (siblings), runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from sqlmodel import Session, select

from agent_chat.db.conversation import load_conversation
from agent_chat.db.errors import InvalidTree, NotFound
from agent_chat.db.messages import (
    active_branch,
    append_message,
    finish_message,
    get_message,
    message_by_run,
    running_messages,
    set_active,
    set_message_run,
    siblings,
)
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus
from agent_chat.db.sessions import create_session
from tests.support.conversations import (
    RANDOM_EDITS,
    add_message,
    random_tree,
    recorded_statements,
)

USER, ASSISTANT = MessageRole.USER, MessageRole.ASSISTANT


def test_append_message_builds_a_chain_and_touches_the_session(
    session: Session, chat: ChatSession
) -> None:
    before = chat.last_message_at
    user = add_message(session, chat, None, content="hi")
    answer = add_message(
        session, chat, user, role=ASSISTANT, status=MessageStatus.RUNNING, run_id="r1"
    )
    assert (user.parent_id, user.branch_order, user.is_active) == (None, 0, True)
    assert (answer.parent_id, answer.role, answer.status) == (user.id, "ASSISTANT", "RUNNING")
    assert chat.last_message_at >= before
    assert [m.id for m in active_branch(session=session, chat_session_id=chat.id)] == [
        user.id,
        answer.id,
    ]


def test_a_new_sibling_becomes_active_with_the_next_branch_order(
    session: Session, chat: ChatSession, user: int
) -> None:
    asked = add_message(session, chat, None)
    first = add_message(session, chat, asked, role=ASSISTANT)
    second = add_message(session, chat, asked, role=ASSISTANT)
    third = add_message(session, chat, asked, role=ASSISTANT)
    assert [m.branch_order for m in (first, second, third)] == [0, 1, 2]
    assert [m.is_active for m in siblings(user_id=user, session=session, message_id=first.id)] == [
        False,
        False,
        True,
    ]
    assert active_branch(session=session, chat_session_id=chat.id)[-1].id == third.id


def test_roots_of_a_session_are_siblings(session: Session, chat: ChatSession, user: int) -> None:
    other_chat = create_session(user_id=user, session=session)
    other_root = add_message(session, other_chat, None)
    first = add_message(session, chat, None, content="v1")
    second = add_message(session, chat, None, content="v2")
    assert [m.id for m in siblings(user_id=user, session=session, message_id=first.id)] == [
        first.id,
        second.id,
    ]
    assert second.branch_order == 1
    assert other_root.is_active  # roots of another session are not siblings
    set_active(user_id=user, session=session, message_id=first.id)
    assert [m.content for m in active_branch(session=session, chat_session_id=chat.id)] == ["v1"]


def test_set_active_switches_the_branch_below(
    session: Session, chat: ChatSession, user: int
) -> None:
    asked = add_message(session, chat, None)
    old = add_message(session, chat, asked, role=ASSISTANT, content="old")
    old_follow_up = add_message(session, chat, old, content="follow-up")
    new = add_message(session, chat, asked, role=ASSISTANT, content="new")
    assert [m.id for m in active_branch(session=session, chat_session_id=chat.id)] == [
        asked.id,
        new.id,
    ]
    set_active(user_id=user, session=session, message_id=old.id)
    assert [m.id for m in active_branch(session=session, chat_session_id=chat.id)] == [
        asked.id,
        old.id,
        old_follow_up.id,
    ]
    assert not new.is_active
    with pytest.raises(NotFound):
        set_active(user_id=user, session=session, message_id=999_999)
    with pytest.raises(NotFound):
        siblings(user_id=user, session=session, message_id=999_999)


def test_append_message_rejects_a_parent_from_another_session_or_unknown(
    session: Session, chat: ChatSession, user: int
) -> None:
    other_chat = create_session(user_id=user, session=session)
    foreign = add_message(session, other_chat, None)
    with pytest.raises(InvalidTree):
        add_message(session, chat, foreign)
    with pytest.raises(InvalidTree):
        append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=999_999,
            role=USER,
            content="x",
            status=MessageStatus.SENT,
        )
    with pytest.raises(NotFound):
        append_message(
            session=session,
            chat_session_id=999_999,
            parent_id=None,
            role=USER,
            content="x",
            status=MessageStatus.SENT,
        )
    with pytest.raises(ValueError):
        add_message(session, chat, None, role="ROBOT")


def test_active_branch_is_one_query(session: Session, chat: ChatSession) -> None:
    parent = None
    for i in range(40):
        parent = add_message(session, chat, parent, role=USER if i % 2 == 0 else ASSISTANT)
    session.expunge_all()
    with recorded_statements(session.get_bind()) as statements:
        branch = active_branch(session=session, chat_session_id=chat.id)
    assert len(branch) == 40
    assert len(statements) == 1


def test_a_conversation_page_reads_whole_only_the_messages_it_shows(
    session: Session, chat: ChatSession, user: int
) -> None:
    """The rest of a long branch is read as an outline (no texts), in the branch's order."""
    parent = None
    for i in range(6):
        parent = add_message(session, chat, parent, role=USER if i % 2 == 0 else ASSISTANT)
    older = add_message(session, chat, parent, content="old version")
    newer = add_message(session, chat, parent, content="new version")  # the active sibling
    answer = add_message(session, chat, newer, role=ASSISTANT, status=MessageStatus.RUNNING)
    finish_message(
        session=session, message_id=answer.id, content="answer", status="SUCCESS", input_tokens=7
    )
    whole = active_branch(session=session, chat_session_id=chat.id)
    view = load_conversation(session=session, session_uuid=chat.session_uuid, user_id=user, limit=2)
    assert view is not None and older.id not in [m.id for m in view.branch]
    assert [m.id for m in view.messages] == [newer.id, answer.id]
    assert [m.content for m in view.messages] == ["new version", "answer"]
    assert [m.id for m in view.branch] == [m.id for m in whole] and view.total == 8
    assert (view.branch[-1].role, view.branch[-1].input_tokens) == ("ASSISTANT", 7)
    assert not hasattr(view.branch[0], "content")
    assert view.versions[newer.id] == (2, 2)


def test_active_branch_of_an_empty_session_is_empty(session: Session, chat: ChatSession) -> None:
    assert active_branch(session=session, chat_session_id=chat.id) == []


def test_get_message_message_by_run_and_set_message_run(
    session: Session, chat: ChatSession
) -> None:
    user = add_message(session, chat, None)
    answer = add_message(session, chat, user, role=ASSISTANT, status=MessageStatus.RUNNING)
    assert get_message(session=session, message_id=answer.id) is answer
    assert get_message(session=session, message_id=999_999) is None
    assert message_by_run(session=session, run_id="run-7") is None
    set_message_run(session=session, message_id=answer.id, run_id="run-7")
    assert message_by_run(session=session, run_id="run-7") is answer
    with pytest.raises(NotFound):
        set_message_run(session=session, message_id=999_999, run_id="x")


def test_finish_message_records_the_outcome(session: Session, chat: ChatSession) -> None:
    user = add_message(session, chat, None)
    answer = add_message(session, chat, user, role=ASSISTANT, status=MessageStatus.RUNNING)
    done = finish_message(
        session=session,
        message_id=answer.id,
        content="the answer",
        status=MessageStatus.FAILED,
        error="model endpoint down",
        input_tokens=10,
        output_tokens=5,
        total_tokens=15,
    )
    assert (done.content, done.status, done.error) == (
        "the answer",
        "FAILED",
        "model endpoint down",
    )
    assert (done.input_tokens, done.output_tokens, done.total_tokens) == (10, 5, 15)
    assert done.completed_at is not None
    with pytest.raises(NotFound):
        finish_message(session=session, message_id=999_999, content="", status="SUCCESS")


def test_running_messages_lists_running_assistant_messages_only(
    session: Session, chat: ChatSession
) -> None:
    user = add_message(session, chat, None, status=MessageStatus.SENT)
    running = add_message(session, chat, user, role=ASSISTANT, status=MessageStatus.RUNNING)
    done = add_message(session, chat, user, role=ASSISTANT, status=MessageStatus.RUNNING)
    finish_message(session=session, message_id=done.id, content="x", status=MessageStatus.SUCCESS)
    add_message(session, chat, None, role=USER, status=MessageStatus.RUNNING)  # not an assistant
    assert [m.id for m in running_messages(session=session)] == [running.id]


# Tree invariants under random edits -------------------------------------------------------


def _check_invariants(session: Session, chat: ChatSession, created: list[int]) -> None:
    rows = session.exec(select(ChatMessage).where(ChatMessage.session_id == chat.id)).all()
    assert sorted(m.id for m in rows) == sorted(created)  # nothing deleted
    by_parent: dict[int | None, list[ChatMessage]] = {}
    for message in rows:
        by_parent.setdefault(message.parent_id, []).append(message)
    for group in by_parent.values():
        assert sum(m.is_active for m in group) == 1
        assert sorted(m.branch_order for m in group) == list(range(len(group)))
    branch = active_branch(session=session, chat_session_id=chat.id)
    assert branch[0].parent_id is None and branch[0].is_active
    for parent, child in zip(branch, branch[1:], strict=False):
        assert child.parent_id == parent.id and child.is_active
    assert branch[-1].id not in by_parent  # ends at a leaf


@settings(
    max_examples=60,
    deadline=None,
    # One database for all examples; each example works in a chat session of its own.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=RANDOM_EDITS)
def test_tree_invariants_hold_under_random_appends_and_activations(
    session: Session, ops: list[tuple[str, int | None]], user: int
) -> None:
    chat = create_session(user_id=user, session=session)
    created = [m.id for m in random_tree(session, chat, user, ops)]
    if created:
        session.expire_all()  # read what is stored, not what is cached
        _check_invariants(session, chat, created)
