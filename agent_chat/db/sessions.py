"""Store functions for chat sessions (the sidebar's rows).

Every conversation has an owner (`owner_id`); a function a person's request reaches takes
the acting `user_id` and treats another person's conversation exactly like a missing one
(same error, same message: no way to learn that it exists). Functions given an internal row
id (`session_id`) are for the app itself: the turn transactions and the run consumer, after
an owned lookup.
"""

from __future__ import annotations

import logging
from uuid import UUID

from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ChatMessage, ChatSession, SessionStatus, new_uuid, utcnow

log = logging.getLogger(__name__)

TITLE_MAX_CHARS = 200
AUTO_TITLE_CHARS = 30


def _one_line(text: str) -> str:
    """`text` on one line: newlines, CRs and runs of whitespace become one space, stripped."""
    return " ".join(text.split())


def _require(session: Session, session_id: int) -> ChatSession:
    chat = session.get(ChatSession, session_id)
    if chat is None:
        raise NotFound(f"Chat session {session_id} does not exist")
    return chat


def _require_uuid(session: Session, session_uuid: str, user_id: int) -> ChatSession:
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        raise NotFound(f"Chat session {session_uuid!r} does not exist")
    return chat


def require_owned(session: Session, session_id: int, user_id: int) -> ChatSession:
    """The conversation with this row id if it is `user_id`'s; NotFound otherwise."""
    chat = session.get(ChatSession, session_id)
    if chat is None or chat.owner_id != user_id:
        raise NotFound(f"Chat session {session_id} does not exist")
    return chat


def create_session(
    *,
    session: Session,
    user_id: int,
    title: str = "",
    model_id: int | None = None,
    skill_folder: str | None = None,
    session_uuid: str | None = None,
    hermes_session: str | None = None,
) -> ChatSession:
    """A new conversation; a page's new conversation brings the ids it chose when it opened
    (its agent may already be built for `hermes_session`)."""
    chat = ChatSession(
        owner_id=user_id,
        title=_one_line(title)[:TITLE_MAX_CHARS],
        model_id=model_id,
        skill_folder=skill_folder,
    )
    if session_uuid is not None:
        chat.session_uuid = str(UUID(session_uuid))
    if hermes_session is not None:
        chat.hermes_session = hermes_session
    session.add(chat)
    session.flush()
    return chat


def get_session(*, session: Session, session_uuid: str, user_id: int) -> ChatSession | None:
    """`user_id`'s session with this uuid, or None (also another person's, and a malformed
    uuid: it comes from a URL)."""
    try:
        canonical = str(UUID(str(session_uuid)))
    except ValueError:
        return None
    query = select(ChatSession).where(
        ChatSession.session_uuid == canonical, col(ChatSession.owner_id) == user_id
    )
    return session.exec(query).first()


def list_sessions(
    *,
    session: Session,
    user_id: int,
    limit: int = 50,
    offset: int = 0,
    include_archived: bool = False,
    search: str | None = None,
    section: str | None = None,
) -> list[ChatSession]:
    """Sessions, most recently used first (ties: newest id first).

    `search` keeps sessions whose title or any message contains it (case-insensitive; the
    sidebar's search is db/search.py). `section` picks a part of the sidebar: "pinned" (newest
    pin first), "filed" (in a folder, not pinned), "unfiled" (neither); None: all.
    """
    query = select(ChatSession).where(col(ChatSession.owner_id) == user_id)
    if section == "pinned":
        query = query.where(col(ChatSession.pinned_at).is_not(None))
    elif section == "filed":
        query = query.where(
            col(ChatSession.pinned_at).is_(None), col(ChatSession.folder_id).is_not(None)
        )
    elif section == "unfiled":
        query = query.where(
            col(ChatSession.pinned_at).is_(None), col(ChatSession.folder_id).is_(None)
        )
    elif section is not None:
        raise ValueError(f"Unknown sidebar section {section!r}")
    if search and search.strip():
        needle = search.strip().lower()
        in_messages = (
            select(ChatMessage.id)
            .where(
                ChatMessage.session_id == ChatSession.id,
                func.lower(ChatMessage.content).contains(needle, autoescape=True),
            )
            .exists()
        )
        query = query.where(
            func.lower(ChatSession.title).contains(needle, autoescape=True) | in_messages
        )
    if include_archived:
        # A condition on each leading column keeps the (owner, status, last_message_at) index usable.
        query = query.where(col(ChatSession.status).in_([s.value for s in SessionStatus]))
    else:
        query = query.where(ChatSession.status == SessionStatus.ACTIVE.value)
    if section == "pinned":
        query = query.order_by(col(ChatSession.pinned_at).desc())
    query = (
        query.order_by(col(ChatSession.last_message_at).desc(), col(ChatSession.id).desc())
        .offset(offset)
        .limit(limit)
    )
    return list(session.exec(query).all())


def rename_session(*, session: Session, session_uuid: str, user_id: int, title: str) -> ChatSession:
    """Set the title (one line, at most 200 characters). Empty → ValidationFailed (a ValueError)."""
    clean = _one_line(title)[:TITLE_MAX_CHARS].strip()
    if not clean:
        raise ValidationFailed({"title": "The title must not be empty."})
    chat = _require_uuid(session, session_uuid, user_id)
    chat.title = clean
    chat.updated_at = utcnow()
    session.add(chat)
    session.flush()
    return chat


def delete_session(*, session: Session, session_uuid: str, user_id: int) -> None:
    """Delete a session; its messages, logs and pauses go with it (ON DELETE CASCADE)."""
    chat = _require_uuid(session, session_uuid, user_id)
    session.flush()
    # A bulk DELETE leaves the children to the database's cascade; the ORM knows no relationships.
    session.execute(delete(ChatSession).where(col(ChatSession.id) == chat.id))
    session.expunge(chat)
    log.info("Deleted chat session %s", session_uuid)


def set_title_if_empty(*, session: Session, session_id: int, text: str) -> str | None:
    """Title an untitled session from the first 30 characters of `text`; the new title or None."""
    chat = _require(session, session_id)
    if chat.title:
        return None
    title = _one_line(text)[:AUTO_TITLE_CHARS].strip()
    if not title:
        return None
    chat.title = title
    chat.updated_at = utcnow()
    session.add(chat)
    session.flush()
    return title


def touch_session(*, session: Session, session_id: int) -> None:
    """Mark the session as just used (it moves to the top of the sidebar)."""
    chat = _require(session, session_id)
    chat.last_message_at = chat.updated_at = utcnow()
    session.add(chat)
    session.flush()


def set_session_model(
    *,
    session: Session,
    session_id: int,
    model_id: int | None,
    skill_folder: str | None,
    tool_profile: str | None = None,
) -> ChatSession:
    chat = _require(session, session_id)
    chat.model_id = model_id
    chat.skill_folder = skill_folder
    if tool_profile:
        chat.tool_profile = tool_profile
    chat.updated_at = utcnow()
    session.add(chat)
    session.flush()
    return chat


def set_session_status(
    *, session: Session, session_id: int, user_id: int, status: SessionStatus | str
) -> ChatSession:
    """Archive or un-archive a session."""
    chat = require_owned(session, session_id, user_id)
    chat.status = SessionStatus(status).value
    chat.updated_at = utcnow()
    session.add(chat)
    session.flush()
    return chat


def new_hermes_session(*, session: Session, session_id: int) -> str:
    """Give the session a fresh hermes-agent session id (on reset, so the agent forgets)."""
    chat = _require(session, session_id)
    chat.hermes_session = new_uuid()
    chat.updated_at = utcnow()
    session.add(chat)
    session.flush()
    return chat.hermes_session


def set_unread(*, session: Session, session_id: int, unread: bool) -> None:
    """Flag (or clear) a finished run the person has not looked at yet."""
    chat = _require(session, session_id)
    if chat.unread != unread:
        chat.unread = unread
        session.add(chat)
        session.flush()
