"""The line that names a message's attachments in the history a later run is sent
(`messages.history_for`). The rule: a message's files go to the agent with that message
only (inline text, image parts: services/attachment_parts.py); every later turn, on whatever
branch, carries the message's text and this note naming them, so the tokens a conversation
sends again stay bounded by its text.
Here too the one read of messages' attachments (`message_attachments`): db/messages.py
imports this module, so it may not import db/attachments.py (which imports db/messages.py).
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from agent_chat.db.attachment_models import Attachment, MessageAttachment


def human_size(size: int) -> str:
    """1,234 bytes → "1.2 kB" (decimal units, as a file manager shows them)."""
    if size < 1000:
        return f"{size} bytes"
    for unit in ("kB", "MB", "GB"):
        size /= 1000
        if size < 1000 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def history_note(rows: list[Attachment], paths: dict[int, str] | None = None) -> str:
    """`[attached earlier: data.csv (text/plain, 1.2 kB), photo.png (image/png, 3.4 kB)]`;
    a file a Workspace run saved is named with its path there (`paths`, by attachment id):
    `data.csv (text/csv, 1.2 kB; in your workspace as attachments/data.csv)`."""
    paths = paths or {}

    def named(r: Attachment) -> str:
        where = f"; in your workspace as {p}" if (p := paths.get(r.id or 0)) else ""
        return f"{r.name} ({r.media_type}, {human_size(r.size)}{where})"

    listed = ", ".join(named(r) for r in rows)
    return f"[attached earlier: {listed}; their content was sent with this message only]"


def _links(session: Session, message_ids: list[int]) -> list[tuple[int, str | None, Attachment]]:
    """(message id, workspace path, attachment) of these messages' links, in order."""
    if not message_ids:
        return []
    query = (
        select(MessageAttachment.message_id, MessageAttachment.workspace_path, Attachment)
        .join(Attachment, col(Attachment.id) == MessageAttachment.attachment_id)
        .where(col(MessageAttachment.message_id).in_(message_ids))
        .order_by(col(MessageAttachment.message_id), col(MessageAttachment.position))
    )
    return list(session.exec(query).all())


def message_attachments(*, session: Session, message_ids: list[int]) -> dict[int, list[Attachment]]:
    """Each message's attachments in order (the app's reads: the caller owns the messages)."""
    found: dict[int, list[Attachment]] = {}
    for message_id, _, attachment in _links(session, message_ids):
        found.setdefault(message_id, []).append(attachment)
    return found


def notes_for(session: Session, message_ids: list[int]) -> dict[int, str]:
    """The history note of each of these messages that has attachments (one query)."""
    rows: dict[int, list[Attachment]] = {}
    paths: dict[int, dict[int, str]] = {}
    for message_id, path, attachment in _links(session, message_ids):
        rows.setdefault(message_id, []).append(attachment)
        if path:
            paths.setdefault(message_id, {})[attachment.id or 0] = path
    return {mid: history_note(found, paths.get(mid)) for mid, found in rows.items()}
