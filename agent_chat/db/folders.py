"""Pins and folders of the sidebar (one level of folders).

Folders and pins are one person's: every function takes the acting `user_id`, and another
person's folder or conversation is NotFound, like a missing one. Folder names are unique
per owner by their key (`names.name_key`: case, accents' spelling and full-width forms aside).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from sqlalchemy import Integer, bindparam, case, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ChatFolder, ChatSession, SessionStatus, utcnow
from agent_chat.db.names import name_key, violates
from agent_chat.db.sessions import _one_line, _require_uuid

FOLDER_NAME_MAX_CHARS = 60
MAX_FOLDERS = 200
UNIQUE_NAME = "uq_chat_folder_owner_id_name_key"


def _clean_name(name: str) -> str:
    clean = _one_line(name or "")[:FOLDER_NAME_MAX_CHARS].strip()
    if not clean:
        raise ValidationFailed({"name": "The folder name must not be empty."})
    return clean


def _require_folder(session: Session, folder_id: int, user_id: int) -> ChatFolder:
    folder = session.get(ChatFolder, folder_id)
    if folder is None or folder.owner_id != user_id:
        raise NotFound(f"Folder {folder_id} does not exist")
    return folder


def _taken(name: str) -> ValidationFailed:
    return ValidationFailed({"name": f"A folder named “{name}” already exists."})


def _check_unique(session: Session, name: str, user_id: int, except_id: int | None = None) -> None:
    query = select(ChatFolder.id).where(
        col(ChatFolder.owner_id) == user_id, col(ChatFolder.name_key) == name_key(name)
    )
    if except_id is not None:
        query = query.where(col(ChatFolder.id) != except_id)
    if session.exec(query).first() is not None:
        raise _taken(name)


def _flush_name(session: Session, folder: ChatFolder, name: str) -> None:
    """Write the folder; a name another transaction took since `_check_unique` is the same
    field error (the caller's transaction is then to be rolled back, as for any error)."""
    session.add(folder)
    try:
        session.flush()
    except IntegrityError as exc:
        columns = ("chat_folder.owner_id", "chat_folder.name_key")
        if violates(exc, constraint=UNIQUE_NAME, columns=columns):
            raise _taken(name) from exc
        raise


def list_folders(*, session: Session, user_id: int) -> list[ChatFolder]:
    """The person's folders by name, ignoring case (by its key), then by age."""
    query = (
        select(ChatFolder)
        .where(col(ChatFolder.owner_id) == user_id)
        .order_by(col(ChatFolder.name_key), col(ChatFolder.id))
    )
    return list(session.exec(query).all())


def create_folder(*, session: Session, user_id: int, name: str) -> ChatFolder:
    clean = _clean_name(name)
    _check_unique(session, clean, user_id)
    count = session.exec(
        select(func.count()).select_from(ChatFolder).where(col(ChatFolder.owner_id) == user_id)
    ).one()
    if count >= MAX_FOLDERS:
        raise ValidationFailed({"name": f"At most {MAX_FOLDERS} folders."})
    folder = ChatFolder(owner_id=user_id, name=clean)
    _flush_name(session, folder, clean)
    return folder


def rename_folder(*, session: Session, user_id: int, folder_id: int, name: str) -> ChatFolder:
    clean = _clean_name(name)
    folder = _require_folder(session, folder_id, user_id)
    _check_unique(session, clean, user_id, except_id=folder_id)
    folder.name = clean
    _flush_name(session, folder, clean)
    return folder


def set_collapsed(*, session: Session, user_id: int, folder_id: int, collapsed: bool) -> None:
    folder = _require_folder(session, folder_id, user_id)
    folder.collapsed = collapsed
    session.add(folder)
    session.flush()


def delete_folder(*, session: Session, user_id: int, folder_id: int) -> int:
    """Delete the folder; its conversations go back to the unfiled list. How many moved."""
    folder = _require_folder(session, folder_id, user_id)
    moved = session.execute(
        update(ChatSession).where(col(ChatSession.folder_id) == folder_id).values(folder_id=None)
    ).rowcount
    session.delete(folder)
    session.flush()
    return moved or 0


def move_session(
    *, session: Session, user_id: int, session_uuid: str, folder_id: int | None
) -> ChatSession:
    """Put the conversation in one of the person's folders, or in none (`folder_id=None`)."""
    chat = _require_uuid(session, session_uuid, user_id)
    if folder_id is not None:
        _require_folder(session, folder_id, user_id)
    chat.folder_id = folder_id
    session.add(chat)
    session.flush()
    return chat


def set_pinned(*, session: Session, user_id: int, session_uuid: str, pinned: bool) -> ChatSession:
    """Pin (to the top of the sidebar, newest pin first) or unpin a conversation."""
    chat = _require_uuid(session, session_uuid, user_id)
    if pinned and chat.pinned_at is None:
        chat.pinned_at = utcnow()
    elif not pinned:
        chat.pinned_at = None
    session.add(chat)
    session.flush()
    return chat


@dataclass
class FolderListing:
    folder: ChatFolder  # a row with its id, name and collapsed
    count: int  # its conversations the sidebar shows (not pinned; archived ones when shown)
    sessions: list[ChatSession]  # the newest of them, up to the folder's limit; none if folded


@dataclass
class SidebarListing:
    # Rows with the ChatSession attributes that a sidebar row reads (_ROW_COLUMNS).
    pinned: list[ChatSession]
    folders: list[FolderListing]
    unfiled: list[ChatSession]  # up to `limit + 1`: one more says there are more


MAX_PINNED = 100
FOLDER_PAGE = 10  # an open folder shows its newest 10 at first
FOLDER_MORE = 50  # "Show more" adds 50
MAX_FOLDER_LIMIT = 1_000
# What a sidebar row needs (rows.session_row): plain rows read faster than ORM objects.
_ROW_COLUMNS = (
    ChatSession.id,
    ChatSession.session_uuid,
    ChatSession.title,
    ChatSession.status,
    ChatSession.unread,
    ChatSession.pinned_at,
    ChatSession.folder_id,
    ChatSession.last_message_at,
    ChatSession.schedule_id,
)


def _shown_statuses(include_archived: bool) -> list[str]:
    if include_archived:
        return [s.value for s in SessionStatus]
    return [SessionStatus.ACTIVE.value]


# The sidebar's statements are built once and run with parameters on the session's
# connection as plain rows: building a statement and the ORM's execution cost more than the
# reading (a refresh is ~6 statements of a few hundred rows at most).
_NEWEST_FIRST = (col(ChatSession.last_message_at).desc(), col(ChatSession.id).desc())
# Every sidebar statement reads one person's rows: the owner leads each index it walks.
_MINE = col(ChatSession.owner_id) == bindparam("owner")


@cache
def _pinned_query():
    return (
        select(*_ROW_COLUMNS)
        .where(_MINE, col(ChatSession.pinned_at).is_not(None))
        .order_by(col(ChatSession.pinned_at).desc(), col(ChatSession.id).desc())
        .limit(MAX_PINNED)
    )


@cache
def _folders_query():
    return (
        select(ChatFolder.id, ChatFolder.name, ChatFolder.collapsed)
        .where(col(ChatFolder.owner_id) == bindparam("owner"))
        .order_by(col(ChatFolder.name_key), col(ChatFolder.id))
    )


@cache
def _unfiled_query():
    """Not pinned, in no folder, of one status, most recently used first: a walk of the
    index (owner_id, folder_id, status, pinned_at, last_message_at) that stops at the limit."""
    return (
        select(*_ROW_COLUMNS)
        .where(
            _MINE,
            col(ChatSession.folder_id).is_(None),
            col(ChatSession.status) == bindparam("status"),
            col(ChatSession.pinned_at).is_(None),
        )
        .order_by(*_NEWEST_FIRST)
        .limit(bindparam("n", type_=Integer))
    )


@cache
def _open_folders_query():
    """The open folders' conversations from the same index, numbered per folder."""
    rank = func.row_number().over(partition_by=col(ChatSession.folder_id), order_by=_NEWEST_FIRST)
    ranked = (
        select(*_ROW_COLUMNS, rank.label("rank"))
        .where(
            _MINE,
            col(ChatSession.folder_id).in_(bindparam("folders", expanding=True)),
            col(ChatSession.status).in_(bindparam("statuses", expanding=True)),
            col(ChatSession.pinned_at).is_(None),
        )
        .subquery()
    )
    return (
        select(ranked)
        .where(ranked.c.rank <= bindparam("top", type_=Integer))
        .order_by(ranked.c.folder_id, ranked.c.rank)
    )


@cache
def _counts_query(include_archived: bool):
    """Folder id → the conversations it shows. Only the owner and `folder_id` are in the
    WHERE (the other conditions are counted) so that SQLite, which has no statistics, reads
    the filed ones from the index holding all the columns instead of walking every active
    conversation by the status index."""
    shown = col(ChatSession.pinned_at).is_(None)
    if not include_archived:
        shown = shown & (col(ChatSession.status) == SessionStatus.ACTIVE.value)
    return (
        select(ChatSession.folder_id, func.sum(case((shown, 1), else_=0)))
        .where(_MINE, col(ChatSession.folder_id).is_not(None))
        .group_by(col(ChatSession.folder_id))
    )


def _unfiled(connection, *, owner: int, include_archived: bool, limit: int) -> list:
    """One index walk per shown status, merged here (`status IN (…)` would make the
    database sort all of them)."""
    rows: list = []
    for status in _shown_statuses(include_archived):
        rows += connection.execute(
            _unfiled_query(), {"owner": owner, "status": status, "n": limit}
        ).all()
    rows.sort(key=lambda c: (c.last_message_at, c.id), reverse=True)
    return rows[:limit]


def _open_folders(
    connection, owner: int, limits: dict[int, int], include_archived: bool
) -> dict[int, list]:
    """Folder id → its newest `limits[id]` conversations, for the open folders, in one query
    (one per folder cost more in running statements than in reading)."""
    if not limits:
        return {}
    params = {
        "owner": owner,
        "folders": list(limits),
        "statuses": _shown_statuses(include_archived),
        "top": max(limits.values()),
    }
    out: dict[int, list] = {}
    for row in connection.execute(_open_folders_query(), params).all():
        if row.rank <= limits[row.folder_id]:
            out.setdefault(row.folder_id, []).append(row)
    return out


def sidebar_listing(
    *,
    session: Session,
    user_id: int,
    limit: int,
    include_archived: bool,
    folder_limits: Mapping[int, int] | None = None,
) -> SidebarListing:
    """`user_id`'s sidebar in one transaction: pins, the folders (each with its count and, when open,
    its newest `folder_limits.get(id, FOLDER_PAGE)` conversations), the first `limit` others.

    Pins are read through their index and filtered here (a status condition in SQL made
    SQLite walk every conversation by the status index); a folded folder costs its count only.
    """
    limits = folder_limits or {}
    connection = session.connection()
    pinned = [
        c
        for c in connection.execute(_pinned_query(), {"owner": user_id}).all()
        if include_archived or c.status == SessionStatus.ACTIVE.value
    ]
    counts = dict(connection.execute(_counts_query(include_archived), {"owner": user_id}).all())
    all_folders = connection.execute(_folders_query(), {"owner": user_id}).all()
    open_limits = {
        f.id: min(max(1, limits.get(f.id, FOLDER_PAGE)), MAX_FOLDER_LIMIT)
        for f in all_folders
        if counts.get(f.id) and not f.collapsed
    }
    chats = _open_folders(connection, user_id, open_limits, include_archived)
    folders = [
        FolderListing(folder=f, count=int(counts.get(f.id) or 0), sessions=chats.get(f.id, []))
        for f in all_folders
    ]
    unfiled = _unfiled(
        connection, owner=user_id, include_archived=include_archived, limit=limit + 1
    )
    return SidebarListing(pinned=pinned, folders=folders, unfiled=unfiled)
