"""Messages queued while a run works (sent one after another as runs end)."""

from __future__ import annotations

from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound
from agent_chat.db.models import QueuedMessage
from agent_chat.db.sessions import get_session


def _chat_id(session: Session, session_uuid: str) -> int:
    chat = get_session(session=session, session_uuid=session_uuid)
    if chat is None or chat.id is None:
        raise NotFound(f"No conversation {session_uuid!r}.")
    return chat.id


def add_queued(
    *,
    session: Session,
    session_uuid: str,
    content: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
) -> QueuedMessage:
    queued = QueuedMessage(
        session_id=_chat_id(session, session_uuid),
        content=content,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )
    session.add(queued)
    session.flush()
    return queued


def list_queued(*, session: Session, session_uuid: str) -> list[QueuedMessage]:
    chat = get_session(session=session, session_uuid=session_uuid)
    if chat is None:
        return []
    where = col(QueuedMessage.session_id) == chat.id
    return list(session.exec(select(QueuedMessage).where(where).order_by(QueuedMessage.id)).all())


def delete_queued(*, session: Session, queued_id: int) -> QueuedMessage | None:
    """Take one message out of the queue; None if it was sent or removed meanwhile."""
    queued = session.get(QueuedMessage, queued_id)
    if queued is not None:
        session.delete(queued)
        session.flush()
    return queued


def pop_queued(*, session: Session, session_uuid: str) -> QueuedMessage | None:
    """The first queued message, taken out of the queue (None when it is empty)."""
    first = next(iter(list_queued(session=session, session_uuid=session_uuid)), None)
    if first is not None:
        session.delete(first)
        session.flush()
    return first


def put_back(*, session: Session, queued: QueuedMessage) -> QueuedMessage:
    """A popped message back in its place (same id, so the same order)."""
    again = QueuedMessage(**queued.model_dump())
    session.add(again)
    session.flush()
    return again
