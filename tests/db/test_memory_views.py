"""The memory drawer's data (`memory_snapshot`): working memory, tool calls, summaries, stats."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from sqlmodel import Session

from agent_chat.db.logs import LogRow, append_logs
from agent_chat.db.memory_views import estimate_tokens, memory_snapshot
from agent_chat.db.messages import append_message, finish_message, history_for, set_active
from agent_chat.db.models import ChatMessage, ChatSession
from agent_chat.db.sessions import create_session
from tests.support.conversations import recorded_statements


def _add(
    session: Session,
    chat: ChatSession,
    parent: ChatMessage | None,
    role: str,
    content: str,
    status: str,
    *,
    tokens: int | None = None,
    created_at: datetime | None = None,
) -> ChatMessage:
    message = append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=parent.id if parent else None,
        role=role,
        content=content,
        status=status,
    )
    if tokens is not None:
        finish_message(
            session=session,
            message_id=message.id,
            content=content,
            status=status,
            total_tokens=tokens,
        )
    if created_at is not None:
        message.created_at = created_at
        session.add(message)
        session.flush()
    return message


def _tool_rows(first_seq: int, call_id: str, tool: str, *, error: bool = False) -> list[LogRow]:
    start = {"call_id": call_id, "tool": tool, "args": {"n": call_id}, "ts": 1.0}
    end = {
        "call_id": call_id,
        "tool": tool,
        "result": f"result of {call_id}",
        "duration_ms": 250,
        "is_error": error,
        "ts": 1.25,
    }
    return [
        LogRow(seq=first_seq, kind="tool_start", tool_name=tool, meta_json=json.dumps(start)),
        LogRow(seq=first_seq + 1, kind="tool_end", tool_name=tool, meta_json=json.dumps(end)),
    ]


def _turn(
    session: Session,
    chat: ChatSession,
    parent: ChatMessage | None,
    question: str,
    answer: str,
    *,
    tools: list[str] = (),
    tokens: int | None = None,
) -> ChatMessage:
    """A user message and its successful answer, with tool calls logged on the answer."""
    user = _add(session, chat, parent, "USER", question, "SENT")
    reply = _add(session, chat, user, "ASSISTANT", answer, "SUCCESS", tokens=tokens)
    rows = [LogRow(seq=1, kind="run_started", meta_json='{"model": "m"}')]
    for index, call_id in enumerate(tools):
        rows += _tool_rows(2 + 2 * index, call_id, "todo" if index % 2 == 0 else "memory")
    append_logs(session=session, message_id=reply.id, rows=rows)
    return reply


def test_unknown_session_gives_none(session: Session, user: int) -> None:
    assert memory_snapshot(user_id=user, session=session, session_uuid="not-a-uuid") is None
    assert (
        memory_snapshot(
            user_id=user, session=session, session_uuid="00000000-0000-0000-0000-000000000000"
        )
        is None
    )


def test_an_empty_conversation_has_empty_views(
    session: Session, chat: ChatSession, user: int
) -> None:
    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert snap is not None
    assert snap.working == [] and snap.tools == [] and snap.summaries == []
    assert snap.working_tokens == 0
    assert (snap.stats.branch_messages, snap.stats.tree_messages) == (0, 0)
    assert (snap.stats.tokens_used, snap.stats.compressions) == (0, 0)
    assert snap.stats.last_compression_at is None


def test_working_memory_is_what_history_for_sends_under_the_leaf(
    session: Session, chat: ChatSession, user: int
) -> None:
    first = _turn(session, chat, None, "q1", "a1")
    summary = _add(session, chat, first, "SYSTEM", "they talked about q1", "SUMMARY")
    second = _turn(session, chat, summary, "q2", "a2 " * 10)
    # A failed answer at the end is sent as a note naming the failure, never its partial text.
    question = _add(session, chat, second, "USER", "q3", "SENT")
    leaf = _add(session, chat, question, "ASSISTANT", "boom", "FAILED")

    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)

    expected = history_for(session=session, chat_session_id=chat.id, parent_id=leaf.id)
    assert snap.working == expected
    assert snap.working[0]["content"].endswith("they talked about q1")
    assert snap.working[-2] == {"role": "user", "content": "q3"}
    assert snap.working[-1]["role"] == "assistant"
    assert snap.working[-1]["content"].startswith("[No answer: this reply failed")
    assert "boom" not in [m["content"] for m in snap.working]
    chars = sum(len(m["content"]) for m in expected)
    assert snap.working_chars == chars
    assert snap.working_tokens == estimate_tokens(chars) == -(-chars // 4)


def test_working_memory_follows_the_active_version(
    session: Session, chat: ChatSession, user: int
) -> None:
    asked = _add(session, chat, None, "USER", "q", "SENT")
    _add(session, chat, asked, "ASSISTANT", "old answer", "SUCCESS")
    _add(session, chat, asked, "ASSISTANT", "new answer", "SUCCESS")  # regenerate: now active
    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert snap.working == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "new answer"},
    ]
    assert (snap.stats.branch_messages, snap.stats.tree_messages) == (2, 3)


def test_tool_calls_are_newest_first_limited_and_only_from_the_active_branch(
    session: Session, chat: ChatSession, user: int
) -> None:
    one = _turn(session, chat, None, "q1", "a1", tools=["c1", "c2"])
    two = _turn(session, chat, one, "q2", "a2", tools=["c3", "c4", "c5"])
    # A discarded version of the last answer: its tool calls are not on the branch.
    user_two = session.get(ChatMessage, two.parent_id)
    hidden = _add(session, chat, user_two, "ASSISTANT", "other", "SUCCESS")
    append_logs(session=session, message_id=hidden.id, rows=_tool_rows(1, "x1", "todo"))
    set_active(user_id=user, session=session, message_id=two.id)

    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert [r.call.call_id for r in snap.tools] == ["c5", "c4", "c3", "c2", "c1"]
    newest = snap.tools[0]
    assert newest.message_id == two.id
    assert newest.call.tool == "todo"
    assert newest.call.args == {"n": "c5"}
    assert newest.call.result == "result of c5"
    assert newest.call.duration_ms == 250
    assert newest.call.done and not newest.call.is_error
    assert newest.started_at is not None

    limited = memory_snapshot(
        user_id=user, session=session, session_uuid=chat.session_uuid, tool_limit=4
    )
    assert [r.call.call_id for r in limited.tools] == ["c5", "c4", "c3", "c2"]
    assert (
        memory_snapshot(
            user_id=user, session=session, session_uuid=chat.session_uuid, tool_limit=0
        ).tools
        == []
    )


def test_a_tool_still_running_and_a_failed_tool_are_shown_as_such(
    session: Session, chat: ChatSession, user: int
) -> None:
    asked = _add(session, chat, None, "USER", "q", "SENT")
    reply = _add(session, chat, asked, "ASSISTANT", "", "RUNNING")
    rows = _tool_rows(1, "bad", "memory", error=True) + _tool_rows(3, "open", "todo")[:1]
    append_logs(session=session, message_id=reply.id, rows=rows)
    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)
    running, failed = snap.tools
    assert (running.call.call_id, running.call.done) == ("open", False)
    assert (failed.call.call_id, failed.call.done, failed.call.is_error) == ("bad", True, True)


def test_summaries_are_newest_first_and_counted_in_the_stats(
    session: Session, chat: ChatSession, user: int
) -> None:
    base = datetime(2024, 5, 1, 12, 0)
    first = _turn(session, chat, None, "q1", "a1", tokens=100)
    older = _add(session, chat, first, "SYSTEM", "older summary", "SUMMARY", created_at=base)
    second = _turn(session, chat, older, "q2", "a2", tokens=50)
    newer = _add(
        session,
        chat,
        second,
        "SYSTEM",
        "newer summary",
        "SUMMARY",
        created_at=base + timedelta(hours=1),
    )
    _add(session, chat, newer, "SYSTEM", "", "RESET")  # a reset marker is not a summary
    # Summaries of another session are not counted.
    other = create_session(user_id=user, session=session, title="other")
    _add(session, other, None, "SYSTEM", "elsewhere", "SUMMARY")

    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)

    assert [s.content for s in snap.summaries] == ["newer summary", "older summary"]
    assert snap.summaries[0].created_at == base + timedelta(hours=1)
    assert snap.summaries[0].message_id == newer.id
    stats = snap.stats
    assert stats.compressions == 2
    assert stats.last_compression_at == base + timedelta(hours=1)
    assert stats.tokens_used == 150
    assert (stats.branch_messages, stats.tree_messages) == (7, 7)


def test_tokens_used_count_every_version_and_ignore_missing_usage(
    session: Session, chat: ChatSession, user: int
) -> None:
    asked = _add(session, chat, None, "USER", "q", "SENT")
    _add(session, chat, asked, "ASSISTANT", "first", "SUCCESS", tokens=40)
    _add(session, chat, asked, "ASSISTANT", "second", "SUCCESS", tokens=2)
    _add(session, chat, asked, "ASSISTANT", "failed early", "FAILED")  # no usage recorded
    snap = memory_snapshot(user_id=user, session=session, session_uuid=chat.session_uuid)
    assert snap.stats.tokens_used == 42
    assert (snap.stats.branch_messages, snap.stats.tree_messages) == (2, 4)


def test_a_long_branch_needs_the_same_few_queries(
    session: Session, chat: ChatSession, user: int
) -> None:
    def build(turns: int) -> ChatSession:
        target = create_session(user_id=user, session=session, title=f"{turns} turns")
        parent = None
        for index in range(turns):
            parent = _turn(
                session,
                target,
                parent,
                f"q{index}",
                f"a{index}",
                tools=[f"t{index}a", f"t{index}b"],
            )
        session.flush()
        return target

    short, long = build(2), build(150)
    counts = []
    for target in (short, long):
        session.expunge_all()  # nothing served from the identity map
        with recorded_statements(session.get_bind()) as statements:
            snap = memory_snapshot(user_id=user, session=session, session_uuid=target.session_uuid)
        counts.append(len(statements))
    assert counts[0] == counts[1] <= 7, counts  # 7: the attachments' notes
    assert snap.stats.branch_messages == 300
    assert len(snap.tools) == 20
    assert snap.tools[0].call.call_id == "t149b"
    assert snap.tools[-1].call.call_id == "t140a"
    assert len(snap.working) == 300
