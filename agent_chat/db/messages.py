"""Store functions for the message tree of a session.

Each message has a parent (None for a root). Among siblings (the children of one parent, or the
roots of one session) exactly one is active; the active branch is the path from the active
root through active children. Nothing is ever deleted here: regenerate and edit add siblings.

Functions given a `chat_session_id` or reached by the run consumer are for the app (after an
owned lookup); those a person's request reaches with a message id (`owned_message`,
`siblings`, `set_active`, `switch_version`) take the acting `user_id`: another person's
message is NotFound, like a missing one.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, literal, update
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from agent_chat.db import attachment_notes
from agent_chat.db.branch import branch_select, single_path
from agent_chat.db.errors import InvalidTree, NotFound
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus, utcnow
from agent_chat.db.sessions import touch_session

SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"


def _require(session: Session, message_id: int) -> ChatMessage:
    message = session.get(ChatMessage, message_id)
    if message is None:
        raise NotFound(f"Message {message_id} does not exist")
    return message


def owned_message(*, session: Session, message_id: int, user_id: int) -> ChatMessage | None:
    """The message if its conversation is `user_id`'s, else None (missing or another's)."""
    query = (
        select(ChatMessage)
        .join(ChatSession, col(ChatSession.id) == ChatMessage.session_id)
        .where(col(ChatMessage.id) == message_id, col(ChatSession.owner_id) == user_id)
    )
    return session.exec(query).first()


def _require_owned(session: Session, message_id: int, user_id: int) -> ChatMessage:
    message = owned_message(session=session, message_id=message_id, user_id=user_id)
    if message is None:
        raise NotFound(f"Message {message_id} does not exist")
    return message


def _siblings_where(chat_session_id: int, parent_id: int | None) -> ColumnElement[bool]:
    """The WHERE clause selecting the siblings under `parent_id` (roots: parent IS NULL)."""
    if parent_id is None:
        return (col(ChatMessage.session_id) == chat_session_id) & col(ChatMessage.parent_id).is_(
            None
        )
    return col(ChatMessage.parent_id) == parent_id


def append_message(
    *,
    session: Session,
    chat_session_id: int,
    parent_id: int | None,
    role: MessageRole | str,
    content: str,
    status: MessageStatus | str,
    run_id: str | None = None,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
) -> ChatMessage:
    """Add a child of `parent_id` (a root if None) as the active sibling, and touch the session."""
    role = MessageRole(role)
    status = MessageStatus(status)
    if parent_id is not None:
        parent = session.get(ChatMessage, parent_id)
        if parent is None or parent.session_id != chat_session_id:
            raise InvalidTree(f"Parent message {parent_id} is not in session {chat_session_id}")
    # Raises NotFound for an unknown session before anything is written.
    touch_session(session=session, session_id=chat_session_id)
    where = _siblings_where(chat_session_id, parent_id)
    highest = session.exec(select(func.max(ChatMessage.branch_order)).where(where)).one()
    session.execute(update(ChatMessage).where(where).values(is_active=False))
    message = ChatMessage(
        session_id=chat_session_id,
        parent_id=parent_id,
        is_active=True,
        branch_order=0 if highest is None else highest + 1,
        run_id=run_id,
        role=role.value,
        content=content,
        status=status.value,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )
    session.add(message)
    session.flush()
    return message


def active_branch(*, session: Session, chat_session_id: int) -> list[ChatMessage]:
    """The active branch, root first, in one recursive query."""
    return single_path(list(session.exec(branch_select(chat_session_id)).all()))


def get_message(*, session: Session, message_id: int) -> ChatMessage | None:
    return session.get(ChatMessage, message_id)


def message_by_run(*, session: Session, run_id: str) -> ChatMessage | None:
    query = (
        select(ChatMessage).where(ChatMessage.run_id == run_id).order_by(col(ChatMessage.id).desc())
    )
    return session.exec(query).first()


def run_owner(*, session: Session, run_id: str) -> int | None:
    """Whose run it is (the owner of its conversation), None for an unknown run."""
    message = message_by_run(session=session, run_id=run_id)
    chat = session.get(ChatSession, message.session_id) if message is not None else None
    return chat.owner_id if chat is not None else None


def set_message_run(*, session: Session, message_id: int, run_id: str | None) -> ChatMessage:
    message = _require(session, message_id)
    message.run_id = run_id
    session.add(message)
    session.flush()
    return message


def finish_message(
    *,
    session: Session,
    message_id: int,
    content: str,
    status: MessageStatus | str,
    error: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    total_tokens: int | None = None,
    context_tokens: int | None = None,
) -> ChatMessage:
    """Record the end of a run on its assistant message."""
    message = _require(session, message_id)
    message.content = content
    message.status = MessageStatus(status).value
    message.error = error
    message.input_tokens = input_tokens
    message.output_tokens = output_tokens
    message.total_tokens = total_tokens
    message.context_tokens = context_tokens
    message.completed_at = utcnow()
    session.add(message)
    session.flush()
    return message


def running_messages(*, session: Session) -> list[ChatMessage]:
    """Assistant messages still RUNNING (the app re-attaches to their runs on start)."""
    query = (
        select(ChatMessage)
        .where(
            ChatMessage.role == MessageRole.ASSISTANT.value,
            ChatMessage.status == MessageStatus.RUNNING.value,
        )
        .order_by(col(ChatMessage.id))
    )
    return list(session.exec(query).all())


def _ancestors(session: Session, chat_session_id: int, message_id: int) -> list[ChatMessage]:
    """`message_id` and its ancestors, root first, in one recursive query."""
    start = (
        select(ChatMessage.id, ChatMessage.parent_id, literal(0).label("depth"))
        .where(col(ChatMessage.id) == message_id)
        .cte("ancestors", recursive=True)
    )
    parent = aliased(ChatMessage)
    chain = start.union_all(
        select(parent.id, parent.parent_id, start.c.depth + 1).where(parent.id == start.c.parent_id)
    )
    query = (
        select(ChatMessage)
        .join(chain, col(ChatMessage.id) == chain.c.id)
        .order_by(chain.c.depth.desc())
    )
    rows = list(session.exec(query).all())
    if not rows or any(m.session_id != chat_session_id for m in rows):
        raise InvalidTree(f"Message {message_id} is not in session {chat_session_id}")
    return rows


def history_for(
    *, session: Session, chat_session_id: int, parent_id: int | None
) -> list[dict[str, str]]:
    """The conversation to send to the agent for a new message under `parent_id`.

    Decision (docs/architecture.md §5, "What the agent gets as context"):
    - The path is `parent_id` and its ancestors, root first. For a parent on the active branch
      this is the active branch up to the parent; for regenerate/edit it is exactly the branch
      being continued. `parent_id=None` (a new root) gives [].
    - A RESET marker drops itself and everything before it.
    - A SUMMARY (hermes compacted the context during a run; it is stored right after that
      run's answer) stands for everything before the turn it was made in: the summary goes
      first, as `{"role": "user", "content": "[Summary of the earlier conversation]\n..."}`
      (a user turn, because OpenAI-style APIs put system text only at the start), then that
      turn's question and answer verbatim (hermes keeps the latest messages too), then what
      follows. Only the latest summary after the latest reset counts.
    - The branch as shown: USER messages are sent as "user"; ASSISTANT messages as
      "assistant": the text when SUCCESS or STOPPED (the part the user saw), and for a FAILED
      answer or a stop before any text a short note naming what happened (`FAILED_NOTE`,
      `STOPPED_NOTE`), so a question without an answer is never merged into the next one
      (hermes joins two user turns in a row). RUNNING answers are left out.
    """
    if parent_id is None:
        return []
    path = _ancestors(session, chat_session_id, parent_id)
    cut, summary_at = 0, None
    for index, message in enumerate(path):
        if message.status == MessageStatus.RESET.value:
            cut, summary_at = index + 1, None
        elif (
            message.role == MessageRole.SYSTEM.value
            and message.status == MessageStatus.SUMMARY.value
        ):
            summary_at = index
    users = [m.id for m in path[cut:] if m.role == MessageRole.USER.value]
    notes = attachment_notes.notes_for(session, users)  # files named, not sent
    if summary_at is None:
        return _as_turns(path[cut:], notes)
    summary = path[summary_at]
    turn = path[max(cut, summary_at - 2) : summary_at]
    return [
        {"role": "user", "content": SUMMARY_PREFIX + summary.content},
        *_as_turns(turn + path[summary_at + 1 :], notes),
    ]


FAILED_NOTE = "[No answer: this reply failed ({error}).]"
STOPPED_NOTE = "[No answer: the person stopped this reply before it began.]"


def _as_turns(path: list[ChatMessage], notes: dict[int, str]) -> list[dict[str, str]]:
    """User and assistant messages as chat turns (markers and running answers left out); a
    user message with attachments ends with the note naming them (db/attachment_notes.py)."""
    turns: list[dict[str, str]] = []
    for message in path:
        text = message.content.strip()
        if message.role == MessageRole.USER.value and text:
            note = notes.get(message.id)
            content = f"{message.content}\n\n{note}" if note else message.content
            turns.append({"role": "user", "content": content})
        elif message.role != MessageRole.ASSISTANT.value:
            continue
        elif message.status == MessageStatus.FAILED.value:
            error = " ".join((message.error or "unknown error").split())[:300]
            turns.append({"role": "assistant", "content": FAILED_NOTE.format(error=error)})
        elif message.status in (MessageStatus.SUCCESS.value, MessageStatus.STOPPED.value):
            turns.append(
                {"role": "assistant", "content": message.content if text else STOPPED_NOTE}
            )
    return turns


def set_active(*, session: Session, message_id: int, user_id: int) -> None:
    """Make this message the active one among its siblings (shows that version)."""
    _activate(session, _require_owned(session, message_id, user_id))


def _activate(session: Session, message: ChatMessage) -> None:
    where = _siblings_where(message.session_id, message.parent_id)
    session.execute(update(ChatMessage).where(where).values(is_active=False))
    session.execute(
        update(ChatMessage).where(col(ChatMessage.id) == message.id).values(is_active=True)
    )
    session.flush()


def siblings(*, session: Session, message_id: int, user_id: int) -> list[ChatMessage]:
    """The message and its siblings (for roots: the session's roots), by branch_order."""
    message = _require_owned(session, message_id, user_id)
    query = (
        select(ChatMessage)
        .where(_siblings_where(message.session_id, message.parent_id))
        .order_by(col(ChatMessage.branch_order), col(ChatMessage.id))
    )
    return list(session.exec(query).all())


def versions_of_branch(
    *, session: Session, chat_session_id: int, branch: list[ChatMessage]
) -> dict[int, tuple[int, int]]:
    """For each message of `branch`: (its 1-based position among its siblings, their count).

    One query for the whole branch: every sibling group is read by its parent id.
    """
    if not branch:
        return {}
    parent_ids = [m.parent_id for m in branch if m.parent_id is not None]
    query = (
        select(ChatMessage.id, ChatMessage.parent_id)
        .where(
            col(ChatMessage.session_id) == chat_session_id,
            col(ChatMessage.parent_id).in_(parent_ids) | col(ChatMessage.parent_id).is_(None),
        )
        .order_by(col(ChatMessage.branch_order), col(ChatMessage.id))
    )
    groups: dict[int | None, list[int]] = {}
    for message_id, parent_id in session.exec(query).all():
        groups.setdefault(parent_id, []).append(message_id)
    result: dict[int, tuple[int, int]] = {}
    for message in branch:
        group = groups.get(message.parent_id) or [message.id]
        result[message.id] = (group.index(message.id) + 1, len(group))
    return result


def switch_version(*, session: Session, message_id: int, user_id: int, step: int) -> ChatMessage:
    """Activate the sibling `step` places away (wrapping is not done: clamped to the ends)."""
    group = siblings(session=session, message_id=message_id, user_id=user_id)
    index = next(i for i, m in enumerate(group) if m.id == message_id)
    target = group[max(0, min(len(group) - 1, index + step))]
    _activate(session, target)
    return target


def add_summary(*, session: Session, after_message_id: int, summary: str) -> ChatMessage:
    """Store hermes' compaction summary right after the answer of the run that made it.

    Later runs under it get the summary instead of what it replaced (see `history_for`).
    """
    answer = _require(session, after_message_id)
    marker = append_message(
        session=session,
        chat_session_id=answer.session_id,
        parent_id=answer.id,
        role=MessageRole.SYSTEM,
        content=summary,
        status=MessageStatus.SUMMARY,
    )
    chat = session.get(ChatSession, answer.session_id)
    chat.last_summarized_at = utcnow()
    session.add(chat)
    session.flush()
    return marker


def message_ids(*, session: Session, chat_session_id: int) -> list[int]:
    """Every message id of the conversation, ascending (an import's are in its file's order)."""
    query = (
        select(ChatMessage.id)
        .where(col(ChatMessage.session_id) == chat_session_id)
        .order_by(col(ChatMessage.id))
    )
    return [i for i in session.exec(query).all() if i is not None]
