"""Store functions of chat sessions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, insert
from sqlmodel import Session, func, select

from agent_chat.db.engine import open_session
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.logs import LogRow, append_logs
from agent_chat.db.messages import append_message
from agent_chat.db.model_configs import create_model
from agent_chat.db.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    MessageRole,
    MessageStatus,
    RunPause,
    SessionStatus,
    utcnow,
)
from agent_chat.db.pauses import create_pause
from agent_chat.db.sessions import (
    create_session,
    delete_session,
    get_session,
    list_sessions,
    new_hermes_session,
    rename_session,
    set_session_model,
    set_session_status,
    set_title_if_empty,
    touch_session,
)
from tests.support.conversations import question_and_running_answer


def test_create_session_has_uuid_hermes_session_and_defaults(session: Session, user: int) -> None:
    chat = create_session(user_id=user, session=session, skill_folder="research")
    assert chat.id is not None
    assert len(chat.session_uuid) == 36
    assert chat.hermes_session and chat.hermes_session != chat.session_uuid
    assert (chat.title, chat.status, chat.skill_folder) == ("", "ACTIVE", "research")
    assert chat.created_at.tzinfo is None


def test_a_new_conversation_is_created_with_the_ids_its_page_chose(
    session: Session, user: int
) -> None:
    # The page at /chat picks the ids when it opens (and has the agent built for them); the
    # first message creates the row with them.
    chat = create_session(
        user_id=user,
        session=session,
        session_uuid="0B7E3C1E-1111-4000-8000-000000000000",
        hermes_session="hermes-of-the-draft",
    )
    assert chat.session_uuid == "0b7e3c1e-1111-4000-8000-000000000000"
    assert chat.hermes_session == "hermes-of-the-draft"
    with pytest.raises(ValueError):
        create_session(user_id=user, session=session, session_uuid="not-a-uuid")


def test_the_agent_of_a_conversation_not_created_yet(session: Session, user: int) -> None:
    from agent_chat.db.turns import Refused, agent_target

    with pytest.raises(Refused, match="No model"):
        agent_target(
            user_id=user,
            session=session,
            session_uuid="0b7e3c1e-2222-4000-8000-000000000000",
            model_id=None,
            tool_profile=None,
            enabled_profiles=("chat", "workspace"),
            draft_hermes_session="draft",
        )
    model = create_model(
        session=session, name="M", base_url="http://127.0.0.1:9/v1", model_name="m"
    )
    target = agent_target(
        user_id=user,
        session=session,
        session_uuid="0b7e3c1e-2222-4000-8000-000000000000",
        model_id=None,
        tool_profile="workspace",
        enabled_profiles=("chat", "workspace"),
        draft_hermes_session="draft",
    )
    assert (target.hermes_session, target.model.id, target.tool_profile) == (
        "draft",
        model.id,
        "workspace",
    )
    assert (
        get_session(
            user_id=user, session=session, session_uuid="0b7e3c1e-2222-4000-8000-000000000000"
        )
        is None
    )


def test_get_session_finds_by_uuid_and_returns_none_for_unknown_or_malformed(
    session: Session, chat: ChatSession, user: int
) -> None:
    assert get_session(user_id=user, session=session, session_uuid=chat.session_uuid) is chat
    assert (
        get_session(user_id=user, session=session, session_uuid=chat.session_uuid.upper()) is chat
    )
    assert (
        get_session(
            user_id=user, session=session, session_uuid="00000000-0000-4000-8000-000000000000"
        )
        is None
    )
    for bad in ("", "not-a-uuid", "../etc/passwd", "1; DROP TABLE chat_session", "x" * 500):
        assert get_session(user_id=user, session=session, session_uuid=bad) is None


def test_list_sessions_orders_by_last_message_then_id_and_pages(
    session: Session, user: int
) -> None:
    base = utcnow()
    chats = [create_session(user_id=user, session=session, title=f"s{i}") for i in range(5)]
    for i, chat in enumerate(chats):
        chat.last_message_at = base - timedelta(minutes=i)
    chats[3].last_message_at = chats[4].last_message_at  # a tie: newer id first
    session.flush()
    titles = [c.title for c in list_sessions(user_id=user, session=session)]
    assert titles == ["s0", "s1", "s2", "s4", "s3"]
    assert [c.title for c in list_sessions(user_id=user, session=session, limit=2, offset=1)] == [
        "s1",
        "s2",
    ]


def test_list_sessions_hides_archived_unless_asked(session: Session, user: int) -> None:
    kept = create_session(user_id=user, session=session, title="kept")
    archived = create_session(user_id=user, session=session, title="archived")
    set_session_status(
        user_id=user, session=session, session_id=archived.id, status=SessionStatus.ARCHIVED
    )
    assert [c.id for c in list_sessions(user_id=user, session=session)] == [kept.id]
    assert {c.id for c in list_sessions(user_id=user, session=session, include_archived=True)} == {
        kept.id,
        archived.id,
    }


def test_list_sessions_pages_ten_thousand_sessions_newest_first(engine: Engine, user: int) -> None:
    # Speed is measured in benchmarks/sidebar.py (no timing assertions here).
    now = utcnow()
    rows = [
        {
            "session_uuid": f"00000000-0000-4000-8000-{i:012d}",
            "title": f"chat {i}",
            "hermes_session": f"h{i}",
            "owner_id": user,
            "status": "ARCHIVED" if i % 10 == 0 else "ACTIVE",
            "created_at": now,
            "last_message_at": now - timedelta(seconds=i),
            "updated_at": now,
        }
        for i in range(10_000)
    ]
    with open_session(engine) as session:
        session.execute(insert(ChatSession), rows)
    with open_session(engine) as session:
        page = list_sessions(user_id=user, session=session, limit=50)
        second = list_sessions(user_id=user, session=session, limit=50, offset=50)
    assert [c.title for c in page[:2]] == ["chat 1", "chat 2"]
    assert len(page) == len(second) == 50
    assert not {c.id for c in page} & {c.id for c in second}
    assert all(c.status == "ACTIVE" for c in page + second)


def test_list_sessions_query_uses_the_owner_status_index(session: Session) -> None:
    if session.get_bind().dialect.name != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN is SQLite's")
    plan = session.connection().exec_driver_sql(
        "EXPLAIN QUERY PLAN SELECT * FROM chat_session WHERE owner_id = 1 AND status = 'ACTIVE' "
        "ORDER BY last_message_at DESC, id DESC LIMIT 50"
    )
    details = " ".join(str(row[-1]) for row in plan)
    assert "ix_chat_session_owner_id_status_last_message_at" in details
    assert "TEMP B-TREE" not in details  # the index gives the order too: no sort


def test_rename_session_cleans_the_title(session: Session, chat: ChatSession, user: int) -> None:
    renamed = rename_session(
        user_id=user, session=session, session_uuid=chat.session_uuid, title="  a\nb\r\nc  "
    )
    assert renamed.title == "a b c"
    long = rename_session(
        user_id=user, session=session, session_uuid=chat.session_uuid, title="x" * 500
    )
    assert len(long.title) == 200


def test_rename_session_rejects_empty_titles_and_unknown_sessions(
    session: Session, chat: ChatSession, user: int
) -> None:
    with pytest.raises(ValueError, match="must not be empty") as caught:
        rename_session(
            user_id=user, session=session, session_uuid=chat.session_uuid, title=" \n\t "
        )
    assert isinstance(caught.value, ValidationFailed)
    assert "title" in caught.value.field_errors
    with pytest.raises(NotFound):
        rename_session(user_id=user, session=session, session_uuid="nope", title="x")


def test_delete_session_cascades_to_messages_logs_and_pauses(engine: Engine, user: int) -> None:
    with open_session(engine) as session:
        chat = create_session(user_id=user, session=session)
        other = create_session(user_id=user, session=session)
        answer = question_and_running_answer(session, chat, "run-1", question="hi")
        append_logs(session=session, message_id=answer.id, rows=[LogRow(seq=1, kind="text")])
        create_pause(
            session=session,
            run_id="run-1",
            message_id=answer.id,
            clarify_id="c1",
            question="?",
            choices=[],
        )
        append_message(
            session=session,
            chat_session_id=other.id,
            parent_id=None,
            role=MessageRole.USER,
            content="stays",
            status=MessageStatus.SENT,
        )
    with open_session(engine) as session:
        delete_session(user_id=user, session=session, session_uuid=chat.session_uuid)
    with open_session(engine) as session:
        assert get_session(user_id=user, session=session, session_uuid=chat.session_uuid) is None
        counts = [
            session.exec(select(func.count()).select_from(table)).one()
            for table in (ChatMessage, ChatMessageLog, RunPause)
        ]
        assert counts == [1, 0, 0]
        with pytest.raises(NotFound):
            delete_session(user_id=user, session=session, session_uuid=chat.session_uuid)


def test_set_title_if_empty_uses_the_first_30_characters_once(
    session: Session,
    user: int,
) -> None:
    chat = create_session(user_id=user, session=session)
    text = "  Hello\nworld,\r\n  this   is a long first message indeed"
    assert set_title_if_empty(session=session, session_id=chat.id, text=text) == (
        "Hello world, this is a long fi"
    )
    assert chat.title == "Hello world, this is a long fi"
    assert set_title_if_empty(session=session, session_id=chat.id, text="other") is None
    assert chat.title == "Hello world, this is a long fi"
    blank = create_session(user_id=user, session=session)
    assert set_title_if_empty(session=session, session_id=blank.id, text=" \n ") is None
    with pytest.raises(NotFound):
        set_title_if_empty(session=session, session_id=999_999, text="x")


def test_touch_session_moves_it_to_the_top(session: Session, user: int) -> None:
    old = create_session(user_id=user, session=session, title="old")
    new = create_session(user_id=user, session=session, title="new")
    old.last_message_at = new.last_message_at - timedelta(hours=1)
    session.flush()
    assert list_sessions(user_id=user, session=session)[0].id == new.id
    touch_session(session=session, session_id=old.id)
    assert list_sessions(user_id=user, session=session)[0].id == old.id
    assert old.updated_at == old.last_message_at
    with pytest.raises(NotFound):
        touch_session(session=session, session_id=999_999)


def test_set_session_model_and_deleted_model_sets_null(engine: Engine, user: int) -> None:
    from agent_chat.db.model_configs import delete_model

    with open_session(engine) as session:
        model = create_model(
            session=session, name="m", base_url="http://localhost:1/v1", model_name="x"
        )
        chat = create_session(user_id=user, session=session)
        set_session_model(session=session, session_id=chat.id, model_id=model.id, skill_folder="s")
    with open_session(engine) as session:
        delete_model(session=session, model_id=model.id)
    with open_session(engine) as session:
        reloaded = get_session(user_id=user, session=session, session_uuid=chat.session_uuid)
        assert (reloaded.model_id, reloaded.skill_folder) == (None, "s")
        with pytest.raises(NotFound):
            set_session_model(session=session, session_id=999_999, model_id=None, skill_folder=None)


def test_new_hermes_session_replaces_the_agent_session_id(
    session: Session, chat: ChatSession
) -> None:
    before = chat.hermes_session
    after = new_hermes_session(session=session, session_id=chat.id)
    assert after != before and chat.hermes_session == after
