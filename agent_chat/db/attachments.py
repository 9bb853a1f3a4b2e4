"""Store functions of the attachments (db/attachment_models.py): their rows, the bytes kept
in the database (`attachment_chunk`), and their links to messages.

An attachment is its owner's: every function a person's request reaches takes `user_id` and
treats another person's attachment as missing (the same NotFound and message).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, exists, func, text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_chat.db.attachment_models import Attachment, AttachmentChunk, MessageAttachment
from agent_chat.db.errors import NotFound
from agent_chat.db.messages import owned_message
from agent_chat.db.models import utcnow

MAX_PER_MESSAGE = 10


def _missing(attachment_id: int) -> NotFound:
    return NotFound(f"Attachment {attachment_id} does not exist")


# --- the bytes, when they are kept in the database ------------------------------------------


def put_chunk(*, session: Session, storage_key: str, seq: int, data: bytes) -> None:
    session.add(AttachmentChunk(storage_key=storage_key, seq=seq, data=data))


def read_chunk(*, session: Session, storage_key: str, seq: int) -> bytes | None:
    """The `seq`th chunk (from 0), None past the last one."""
    query = select(AttachmentChunk.data).where(
        col(AttachmentChunk.storage_key) == storage_key, col(AttachmentChunk.seq) == seq
    )
    return session.exec(query).first()


def delete_chunks(*, session: Session, storage_key: str) -> None:
    session.execute(delete(AttachmentChunk).where(col(AttachmentChunk.storage_key) == storage_key))


def orphan_chunk_keys(*, session: Session, before: datetime) -> list[str]:
    """Keys of chunks written before `before` that no attachment names: uploads cut off by
    a crash (a refused or broken upload deletes its own at once)."""
    named = exists().where(col(Attachment.storage_key) == AttachmentChunk.storage_key)
    query = (
        select(AttachmentChunk.storage_key)
        .where(col(AttachmentChunk.seq) == 0, col(AttachmentChunk.created_at) < before)
        .where(~named)
    )
    return list(session.exec(query).all())


# --- the rows ---------------------------------------------------------------------------------


def find_same(*, session: Session, user_id: int, sha256: str, name: str) -> Attachment | None:
    query = select(Attachment).where(
        col(Attachment.owner_id) == user_id,
        col(Attachment.sha256) == sha256,
        col(Attachment.name) == name,
    )
    return session.exec(query).first()


def create_attachment(
    *,
    session: Session,
    user_id: int,
    sha256: str,
    name: str,
    media_type: str,
    size: int,
    storage_key: str,
) -> tuple[Attachment, bool]:
    """The person's attachment of these bytes under this name: a new row (True) whose bytes
    are at `storage_key`, or the one they already had (False: the caller deletes its new
    bytes), also when another upload of the same file made it a moment ago."""
    if session.get_bind().dialect.name == "sqlite":
        # The write lock before the read: SQLite refuses at once (no busy wait) a write after
        # a read older than another upload's write, as two files picked together make.
        session.exec(text("UPDATE attachment SET id = id WHERE 0 = 1"))  # type: ignore[call-overload]
    existing = find_same(session=session, user_id=user_id, sha256=sha256, name=name)
    if existing is not None:
        existing.created_at = utcnow()  # uploaded again: the sweep's grace starts again
        session.add(existing)
        return existing, False
    row = Attachment(
        owner_id=user_id,
        sha256=sha256,
        name=name,
        media_type=media_type,
        size=size,
        storage_key=storage_key,
    )
    try:
        with session.begin_nested():
            session.add(row)
            session.flush()
    except IntegrityError:
        existing = find_same(session=session, user_id=user_id, sha256=sha256, name=name)
        if existing is None:
            raise
        return existing, False
    return row, True


def get_attachment(*, session: Session, user_id: int, attachment_id: int) -> Attachment:
    """The person's attachment; another's is NotFound like a missing one."""
    row = session.get(Attachment, attachment_id)
    if row is None or row.owner_id != user_id:
        raise _missing(attachment_id)
    return row


def link_to_message(
    *, session: Session, user_id: int, message_id: int, attachment_ids: list[int]
) -> list[Attachment]:
    """Give the person's message these attachments of theirs, in this order (the message's
    links so far are replaced). A message or attachment not theirs is NotFound."""
    if owned_message(session=session, message_id=message_id, user_id=user_id) is None:
        raise NotFound(f"Message {message_id} does not exist")
    ids = list(dict.fromkeys(attachment_ids))
    rows = [get_attachment(session=session, user_id=user_id, attachment_id=i) for i in ids]
    session.execute(
        delete(MessageAttachment).where(col(MessageAttachment.message_id) == message_id)
    )
    for position, attachment_id in enumerate(ids):
        session.add(
            MessageAttachment(message_id=message_id, attachment_id=attachment_id, position=position)
        )
    session.flush()
    return rows


def record_workspace_paths(
    *, session: Session, user_id: int, message_id: int, paths: dict[int, str]
) -> None:
    """Where the person's message's files were saved in its workspace, by attachment id
    (links of other attachments are left alone). A message not theirs is NotFound."""
    if owned_message(session=session, message_id=message_id, user_id=user_id) is None:
        raise NotFound(f"Message {message_id} does not exist")
    for attachment_id, path in paths.items():
        session.execute(
            update(MessageAttachment)
            .where(col(MessageAttachment.message_id) == message_id)
            .where(col(MessageAttachment.attachment_id) == attachment_id)
            .values(workspace_path=path[:300])
        )


def _unused():
    return ~exists().where(col(MessageAttachment.attachment_id) == Attachment.id)


def unused_attachments(*, session: Session, before: datetime, limit: int = 500) -> list[Attachment]:
    """Attachments made before `before` that no message uses (the app's own sweep)."""
    query = (
        select(Attachment)
        .where(col(Attachment.created_at) < before, _unused())
        .order_by(col(Attachment.id))
        .limit(limit)
    )
    return list(session.exec(query).all())


def delete_if_unused(*, session: Session, attachment_id: int, before: datetime) -> bool:
    """Delete the row if still no message uses it and it was not uploaded again since it was
    listed. True if deleted: its bytes are then the caller's to delete."""
    result = session.execute(
        delete(Attachment).where(
            col(Attachment.id) == attachment_id, col(Attachment.created_at) < before, _unused()
        )
    )
    return bool(result.rowcount)


def count_attachments(*, session: Session, user_id: int) -> int:
    query = select(func.count()).select_from(Attachment).where(col(Attachment.owner_id) == user_id)
    return int(session.exec(query).one())
