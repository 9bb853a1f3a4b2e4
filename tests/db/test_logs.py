"""Run event logs: bulk insert, dedup of re-delivered events, reading back."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from agent_chat.db.logs import LogRow, append_logs, last_seq, list_logs
from agent_chat.db.messages import append_message
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus
from tests.support.conversations import question_and_running_answer, recorded_statements


@pytest.fixture
def answer(session: Session, chat: ChatSession) -> ChatMessage:
    return question_and_running_answer(session, chat, "run-1")


def test_append_logs_writes_rows_and_list_logs_reads_them_in_seq_order(
    session: Session, answer: ChatMessage
) -> None:
    written = append_logs(
        session=session,
        message_id=answer.id,
        rows=[
            LogRow(seq=2, kind="tool_start", tool_name="web_search", meta_json='{"q": 1}'),
            LogRow(seq=1, kind="reasoning", content="thinking…"),
            LogRow(seq=3, kind="text", content="Hello"),
        ],
    )
    assert written == 3
    logs = list_logs(session=session, message_id=answer.id)
    assert [(r.seq, r.kind, r.content, r.tool_name) for r in logs] == [
        (1, "reasoning", "thinking…", None),
        (2, "tool_start", "", "web_search"),
        (3, "text", "Hello", None),
    ]
    assert logs[1].meta_json == '{"q": 1}'
    assert last_seq(session=session, message_id=answer.id) == 3


def test_append_logs_ignores_re_delivered_seqs(session: Session, answer: ChatMessage) -> None:
    first = [LogRow(seq=i, kind="text", content=f"t{i}") for i in range(1, 6)]
    assert append_logs(session=session, message_id=answer.id, rows=first) == 5
    again = [LogRow(seq=i, kind="text", content=f"again{i}") for i in range(4, 9)]
    assert append_logs(session=session, message_id=answer.id, rows=again) == 3
    assert append_logs(session=session, message_id=answer.id, rows=again) == 0
    doubled = [LogRow(seq=9, kind="text", content="a"), LogRow(seq=9, kind="text", content="b")]
    assert append_logs(session=session, message_id=answer.id, rows=doubled) == 1
    logs = list_logs(session=session, message_id=answer.id)
    assert [r.seq for r in logs] == list(range(1, 10))
    assert [r.content for r in logs][3:5] == ["t4", "t5"]  # the first delivery wins
    assert logs[-1].content == "a"


def test_append_logs_is_one_insert_statement_for_a_batch(
    session: Session, answer: ChatMessage
) -> None:
    with recorded_statements(session.get_bind()) as statements:
        rows = [LogRow(seq=i, kind="text", content="x") for i in range(1, 201)]
        assert append_logs(session=session, message_id=answer.id, rows=rows) == 200
    inserts = [s for s in statements if s.lstrip().upper().startswith("INSERT")]
    assert len(inserts) == 1


def test_append_logs_with_no_rows_writes_nothing(session: Session, answer: ChatMessage) -> None:
    assert append_logs(session=session, message_id=answer.id, rows=[]) == 0
    assert last_seq(session=session, message_id=answer.id) == 0
    assert list_logs(session=session, message_id=answer.id) == []


def test_logs_of_different_messages_are_separate(
    session: Session, chat: ChatSession, answer: ChatMessage
) -> None:
    other = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=answer.parent_id,
        role=MessageRole.ASSISTANT,
        content="",
        status=MessageStatus.RUNNING,
    )
    append_logs(session=session, message_id=answer.id, rows=[LogRow(seq=1, kind="text")])
    assert append_logs(session=session, message_id=other.id, rows=[LogRow(seq=1, kind="text")]) == 1
    assert last_seq(session=session, message_id=other.id) == 1
