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


def history_note(rows: list[Attachment]) -> str:
    """`[attached earlier: data.csv (text/plain, 1.2 kB), photo.png (image/png, 3.4 kB)]`."""
    named = ", ".join(f"{r.name} ({r.media_type}, {human_size(r.size)})" for r in rows)
    return f"[attached earlier: {named}; their content was sent with this message only]"


def message_attachments(*, session: Session, message_ids: list[int]) -> dict[int, list[Attachment]]:
    """Each message's attachments in order (the app's reads: the caller owns the messages)."""
    if not message_ids:
        return {}
    query = (
        select(MessageAttachment.message_id, Attachment)
        .join(Attachment, col(Attachment.id) == MessageAttachment.attachment_id)
        .where(col(MessageAttachment.message_id).in_(message_ids))
        .order_by(col(MessageAttachment.message_id), col(MessageAttachment.position))
    )
    found: dict[int, list[Attachment]] = {}
    for message_id, attachment in session.exec(query).all():
        found.setdefault(message_id, []).append(attachment)
    return found


def notes_for(session: Session, message_ids: list[int]) -> dict[int, str]:
    """The history note of each of these messages that has attachments (one query)."""
    found = message_attachments(session=session, message_ids=message_ids)
    return {message_id: history_note(rows) for message_id, rows in found.items()}
