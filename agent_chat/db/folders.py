"""Pins and folders of the sidebar (one level of folders).

Every function takes keyword arguments only, so scoping them to an owner later (accounts,
issue 13) is one more argument and one more condition, not a new API.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ChatFolder, ChatSession, SessionStatus, utcnow
from agent_chat.db.sessions import _one_line, _require_uuid, list_sessions

FOLDER_NAME_MAX_CHARS = 60
MAX_FOLDERS = 200


def _clean_name(name: str) -> str:
    clean = _one_line(name or "")[:FOLDER_NAME_MAX_CHARS].strip()
    if not clean:
        raise ValidationFailed({"name": "The folder name must not be empty."})
    return clean


def _require_folder(session: Session, folder_id: int) -> ChatFolder:
    folder = session.get(ChatFolder, folder_id)
    if folder is None:
        raise NotFound(f"Folder {folder_id} does not exist")
    return folder


def _check_unique(session: Session, name: str, except_id: int | None = None) -> None:
    query = select(ChatFolder.id).where(func.lower(ChatFolder.name) == name.lower())
    if except_id is not None:
        query = query.where(col(ChatFolder.id) != except_id)
    if session.exec(query).first() is not None:
        raise ValidationFailed({"name": f"A folder named “{name}” already exists."})


def list_folders(*, session: Session) -> list[ChatFolder]:
    """Folders by name (case-insensitive), then by age."""
    query = select(ChatFolder).order_by(func.lower(ChatFolder.name), col(ChatFolder.id))
    return list(session.exec(query).all())


def create_folder(*, session: Session, name: str) -> ChatFolder:
    clean = _clean_name(name)
    _check_unique(session, clean)
    count = session.exec(select(func.count()).select_from(ChatFolder)).one()
    if count >= MAX_FOLDERS:
        raise ValidationFailed({"name": f"At most {MAX_FOLDERS} folders."})
    folder = ChatFolder(name=clean)
    session.add(folder)
    session.flush()
    return folder


def rename_folder(*, session: Session, folder_id: int, name: str) -> ChatFolder:
    clean = _clean_name(name)
    folder = _require_folder(session, folder_id)
    _check_unique(session, clean, except_id=folder_id)
    folder.name = clean
    session.add(folder)
    session.flush()
    return folder


def set_collapsed(*, session: Session, folder_id: int, collapsed: bool) -> None:
    folder = _require_folder(session, folder_id)
    folder.collapsed = collapsed
    session.add(folder)
    session.flush()


def delete_folder(*, session: Session, folder_id: int) -> int:
    """Delete the folder; its conversations go back to the unfiled list. How many moved."""
    folder = _require_folder(session, folder_id)
    moved = session.execute(
        update(ChatSession).where(col(ChatSession.folder_id) == folder_id).values(folder_id=None)
    ).rowcount
    session.delete(folder)
    session.flush()
    return moved or 0


def move_session(*, session: Session, session_uuid: str, folder_id: int | None) -> ChatSession:
    """Put the conversation in a folder, or in none (`folder_id=None`)."""
    chat = _require_uuid(session, session_uuid)
    if folder_id is not None:
        _require_folder(session, folder_id)
    chat.folder_id = folder_id
    session.add(chat)
    session.flush()
    return chat


def set_pinned(*, session: Session, session_uuid: str, pinned: bool) -> ChatSession:
    """Pin (to the top of the sidebar, newest pin first) or unpin a conversation."""
    chat = _require_uuid(session, session_uuid)
    if pinned and chat.pinned_at is None:
        chat.pinned_at = utcnow()
    elif not pinned:
        chat.pinned_at = None
    session.add(chat)
    session.flush()
    return chat


@dataclass
class SidebarListing:
    # Pinned and filed: rows with ChatSession's attributes that a sidebar row reads.
    pinned: list[ChatSession]
    folders: list[tuple[ChatFolder, list[ChatSession]]]
    unfiled: list[ChatSession]  # up to `limit + 1`: one more says there are more


MAX_PINNED = 100
MAX_FILED = 1_000
# What a sidebar row needs (rows.session_row): plain rows read faster than ORM objects, and a
# heavy user has hundreds of filed conversations read on every refresh.
_ROW_COLUMNS = (
    ChatSession.id,
    ChatSession.session_uuid,
    ChatSession.title,
    ChatSession.status,
    ChatSession.unread,
    ChatSession.pinned_at,
    ChatSession.folder_id,
    ChatSession.last_message_at,
)


def sidebar_listing(*, session: Session, limit: int, include_archived: bool) -> SidebarListing:
    """The sidebar in one transaction: pins, each folder's conversations, the first
    `limit` others. Pins and folders are not paged (a person keeps a few of them).

    Pins and filed conversations are read through their own indexes and filtered here (a
    status condition in SQL made SQLite walk every conversation by the status index).
    """

    def shown(chat: ChatSession) -> bool:
        return include_archived or chat.status == SessionStatus.ACTIVE.value

    pinned_query = (
        select(*_ROW_COLUMNS)
        .where(col(ChatSession.pinned_at).is_not(None))
        .order_by(col(ChatSession.pinned_at).desc(), col(ChatSession.id).desc())
        .limit(MAX_PINNED)
    )
    pinned = [c for c in session.exec(pinned_query).all() if shown(c)]
    filed_query = (
        select(ChatSession).where(col(ChatSession.folder_id).is_not(None)).limit(MAX_FILED)
    )
    filed = [c for c in session.exec(filed_query).all() if c.pinned_at is None and shown(c)]
    filed.sort(key=lambda c: (c.last_message_at, c.id), reverse=True)
    by_folder: dict[int, list[ChatSession]] = {}
    for chat in filed:
        by_folder.setdefault(chat.folder_id, []).append(chat)
    folders = [(f, by_folder.get(f.id, [])) for f in list_folders(session=session)]
    unfiled = list_sessions(
        session=session, section="unfiled", limit=limit + 1, include_archived=include_archived
    )
    return SidebarListing(pinned=pinned, folders=folders, unfiled=unfiled)
