"""Conversations built straight in the store, for tests that need rows to work on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from hypothesis import strategies as st
from sqlalchemy import event
from sqlmodel import Session

from agent_chat.db.messages import append_message, set_active
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus


def add_message(
    session: Session, chat: ChatSession, parent: ChatMessage | None, **kw: Any
) -> ChatMessage:
    """A message under `parent` (a question, "text", sent, unless `kw` says otherwise)."""
    return append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=parent.id if parent else None,
        role=kw.pop("role", MessageRole.USER),
        content=kw.pop("content", "text"),
        status=kw.pop("status", MessageStatus.SENT),
        **kw,
    )


# Random edits of a conversation's tree, for property tests: ("append", the index of an
# existing message to answer, or None for a new root) or ("activate", an index); indexes wrap
# around the messages made so far (`random_tree`).
RANDOM_EDITS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.none() | st.integers(min_value=0, max_value=60)),
        st.tuples(st.just("activate"), st.integers(min_value=0, max_value=60)),
    ),
    min_size=1,
    max_size=40,
)


def random_tree(
    session: Session, chat: ChatSession, user_id: int, edits: list[tuple[str, int | None]]
) -> list[ChatMessage]:
    """`edits` (drawn from RANDOM_EDITS) made in `chat`; the messages appended, in order."""
    made: list[ChatMessage] = []
    for op, index in edits:
        if op == "append":
            parent = made[index % len(made)] if made and index is not None else None
            made.append(add_message(session, chat, parent))
        elif made:
            set_active(user_id=user_id, session=session, message_id=made[index % len(made)].id)
    return made


@contextmanager
def recorded_statements(bind: Any) -> Iterator[list[str]]:
    """The SQL statements run on `bind`'s engine (a session's bind or an engine) inside the
    block: for tests that a read takes a fixed number of queries."""
    engine = getattr(bind, "engine", bind)
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


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


def conversation_at_any_revision(session: Session, *, user_id: int, title: str) -> SimpleNamespace:
    """A new conversation written with only the columns the database has now: a migration
    test writes rows at an older revision, where a later column of the model (and so the
    ORM's INSERT) does not exist yet. Its `id`, `session_uuid` and `owner_id`."""
    row = ChatSession(owner_id=user_id, title=title)  # the model's defaults filled in
    new_id = _insert_present(session, row)
    return SimpleNamespace(id=new_id, session_uuid=row.session_uuid, owner_id=user_id)


def message_at_any_revision(
    session: Session,
    *,
    chat_id: int,
    parent_id: int | None,
    role: MessageRole,
    content: str,
    status: MessageStatus,
) -> SimpleNamespace:
    """A message written as `conversation_at_any_revision` writes a conversation (the only
    child of its parent: these tests build single branches); its `id`."""
    row = ChatMessage(
        session_id=chat_id, parent_id=parent_id, is_active=True, branch_order=0,
        role=role.value, content=content, status=status.value,
    )  # fmt: skip
    return SimpleNamespace(id=_insert_present(session, row))


def _insert_present(session: Session, row: ChatSession | ChatMessage) -> int:
    table = type(row).__table__
    present = {c["name"] for c in sa.inspect(session.connection()).get_columns(table.name)}
    values = {k: v for k, v in row.model_dump().items() if k in present and k != "id"}
    return session.execute(sa.insert(table).values(**values).returning(table.c.id)).scalar_one()
