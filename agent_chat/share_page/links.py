"""Making a share link: the snapshot of the active branch and the row, in one transaction
(a store function: the page's dialog and any other caller use this one)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TypedDict

from sqlmodel import Session

from agent_chat.db.attachment_models import IMAGE_TYPES, Attachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.messages import active_branch
from agent_chat.db.models import MessageRole, utcnow
from agent_chat.db.sessions import get_session
from agent_chat.db.shares import NewShare, ShareInfo, add_share
from agent_chat.export.reading import collect
from agent_chat.share_page.snapshot import take_snapshot

SHARE_PREFIX = "/s/"
PICTURES = "/pictures/"  # /s/<token>/pictures/<n>: a snapshot's n-th picture
MAX_PICTURES = 100  # thumbnails a snapshot keeps (about 15 kB each); later pictures are named
# The expiry choices the dialog offers: value → (label, days; None never expires).
EXPIRY_CHOICES: dict[str, tuple[str, int | None]] = {
    "never": ("Never expires", None),
    "1": ("Expires in 1 day", 1),
    "7": ("Expires in 7 days", 7),
    "30": ("Expires in 30 days", 30),
}


def share_path(token: str) -> str:
    return SHARE_PREFIX + token


def picture_path(token: str, index: int) -> str:
    return f"{SHARE_PREFIX}{token}{PICTURES}{index}"


def branch_pictures(*, session: Session, session_uuid: str, user_id: int) -> list[Attachment]:
    """The person's pictures on the conversation's active branch, in page order, at most
    `MAX_PICTURES` (the share page shows their thumbnails, later ones by name). NotFound for
    another person's conversation, as for none."""
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None or chat.id is None:
        raise NotFound(f"Chat session {session_uuid!r} does not exist")
    path = active_branch(session=session, chat_session_id=chat.id)
    ids = [m.id for m in path if m.id is not None and m.role == MessageRole.USER]
    found = message_attachments(session=session, message_ids=ids)
    rows = [
        row
        for mid in ids
        for row in found.get(mid, [])
        if row.owner_id == user_id and row.media_type in IMAGE_TYPES
    ]
    return rows[:MAX_PICTURES]


def create_share(
    *,
    session: Session,
    session_uuid: str,
    user_id: int,
    expiry: str = "never",
    thumbnails: Mapping[int, bytes] | None = None,
) -> NewShare:
    """A new link to a snapshot of `user_id`'s conversation's active branch as it is now.

    `thumbnails`: pictures' thumbnails by attachment id, frozen into the snapshot. Raises
    NotFound for an unknown conversation (or another person's), ValidationFailed for an
    unknown expiry or a conversation with nothing to show yet.
    """
    if expiry not in EXPIRY_CHOICES:
        raise ValidationFailed({"expiry": f"one of {', '.join(EXPIRY_CHOICES)}"})
    data = collect(session=session, session_uuid=session_uuid, user_id=user_id, branch="active")
    if not data.active_ids:
        raise ValidationFailed({"session": "There is nothing to share yet: send a message first."})
    now = utcnow()
    snapshot = take_snapshot(data, taken_at=now, thumbnails=thumbnails)
    days = EXPIRY_CHOICES[expiry][1]
    return add_share(
        session=session,
        chat_session_id=data.chat.id or 0,
        user_id=user_id,
        title=snapshot["title"],
        snapshot_json=json.dumps(snapshot, ensure_ascii=False),
        message_count=len(snapshot["messages"]),
        expires_at=None if days is None else now + timedelta(days=days),
    )


class ShareRow(TypedDict):
    """A link as the dialog and the settings list show it."""

    id: int
    prefix: str  # the token's first characters ("/s/AbC123…")
    session_uuid: str
    title: str  # the conversation's title now
    created: str
    expires: str  # "never expires", "expires 2026-12-08 16:00 UTC", "expired …"
    expired: bool
    messages: int


def _when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def share_row(info: ShareInfo, *, now: datetime) -> ShareRow:
    row = info.row
    expired = row.expires_at is not None and now >= row.expires_at
    if row.expires_at is None:
        expires = "never expires"
    else:
        expires = f"{'expired' if expired else 'expires'} {_when(row.expires_at)}"
    return ShareRow(
        id=row.id or 0,
        prefix=row.prefix,
        session_uuid=info.session_uuid,
        title=info.session_title or row.title or "Conversation",
        created=_when(row.created_at),
        expires=expires,
        expired=expired,
        messages=row.message_count,
    )
