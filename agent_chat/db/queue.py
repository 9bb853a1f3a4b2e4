"""Messages queued while a run works (sent one after another as runs end).

What a person does takes their `user_id` (another person's conversation or queued message is
NotFound, like a missing one); `pop_queued`/`put_back` are the app's (the next message of a
conversation whose run ended: the queue's owner is the conversation's).
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatSession, QueuedMessage
from agent_chat.db.sessions import get_session


def _chat_id(session: Session, session_uuid: str, user_id: int) -> int:
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None or chat.id is None:
        raise NotFound(f"No conversation {session_uuid!r}.")
    return chat.id


def add_queued(
    *,
    session: Session,
    session_uuid: str,
    user_id: int,
    content: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
) -> QueuedMessage:
    queued = QueuedMessage(
        session_id=_chat_id(session, session_uuid, user_id),
        content=content,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )
    session.add(queued)
    session.flush()
    return queued


def list_queued(*, session: Session, session_uuid: str, user_id: int) -> list[QueuedMessage]:
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    return [] if chat is None else _queued(session, chat.id)


def _queued(session: Session, chat_session_id: int | None) -> list[QueuedMessage]:
    where = col(QueuedMessage.session_id) == chat_session_id
    return list(session.exec(select(QueuedMessage).where(where).order_by(QueuedMessage.id)).all())


def delete_queued(*, session: Session, queued_id: int, user_id: int) -> QueuedMessage | None:
    """Take one message out of the queue; None if it was sent or removed meanwhile (or is
    another person's)."""
    query = (
        select(QueuedMessage)
        .join(ChatSession, col(ChatSession.id) == QueuedMessage.session_id)
        .where(col(QueuedMessage.id) == queued_id, col(ChatSession.owner_id) == user_id)
    )
    queued = session.exec(query).first()
    if queued is not None:
        session.delete(queued)
        session.flush()
    return queued


def pop_queued(*, session: Session, session_uuid: str) -> QueuedMessage | None:
    """The first queued message, taken out of the queue (None when it is empty). The app's:
    the run that ended was the conversation owner's."""
    chat = session.exec(select(ChatSession).where(ChatSession.session_uuid == session_uuid)).first()
    first = next(iter(_queued(session, chat.id)), None) if chat is not None else None
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
