"""Store functions for read-only share links (`share_link`).

A link's token is 24 random bytes (URL-safe base64, 32 characters, 192 bits): only its
SHA-256 is stored, like the API tokens (`db/api_tokens.py`), so the database alone cannot
open a link. The token is returned once, by `add_share`.

Making, listing and revoking links are the conversation owner's (`user_id`): another
person's conversation or link is NotFound. Opening a link (`open_share`) needs no account.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from agent_chat.db.api_tokens import hash_token  # the same SHA-256 as the API tokens
from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatSession, ShareLink, utcnow
from agent_chat.db.sessions import require_owned

TOKEN_BYTES = 24
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")  # what token_urlsafe(24) makes
SHOWN_PREFIX_CHARS = 6


@dataclass(frozen=True)
class NewShare:
    token: str  # shown once, never stored
    row: ShareLink


@dataclass(frozen=True)
class ShareInfo:
    """A link in a list: the row and its conversation's uuid and current title."""

    row: ShareLink
    session_uuid: str
    session_title: str


def add_share(
    *,
    session: Session,
    chat_session_id: int,
    user_id: int,
    title: str,
    snapshot_json: str,
    message_count: int,
    expires_at: datetime | None,
) -> NewShare:
    require_owned(session, chat_session_id, user_id)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    row = ShareLink(
        session_id=chat_session_id,
        token_hash=hash_token(token),
        prefix=token[:SHOWN_PREFIX_CHARS],
        title=title,
        snapshot_json=snapshot_json,
        message_count=message_count,
        expires_at=expires_at,
    )
    session.add(row)
    session.flush()
    return NewShare(token=token, row=row)


def list_shares(
    *, session: Session, user_id: int, session_uuid: str | None = None
) -> list[ShareInfo]:
    """`user_id`'s links not revoked (expired ones too: the list says so), newest first; of
    one conversation when `session_uuid` is given."""
    query = (
        select(ShareLink, ChatSession.session_uuid, ChatSession.title)
        .join(ChatSession, col(ChatSession.id) == ShareLink.session_id)
        .where(col(ShareLink.revoked_at).is_(None), col(ChatSession.owner_id) == user_id)
    )
    if session_uuid is not None:
        query = query.where(ChatSession.session_uuid == session_uuid)
    rows = session.exec(query.order_by(col(ShareLink.id).desc())).all()
    return [ShareInfo(row=row, session_uuid=uuid, session_title=title) for row, uuid, title in rows]


def revoke_share(*, session: Session, user_id: int, share_id: int) -> ShareLink:
    row = session.get(ShareLink, share_id)
    chat = session.get(ChatSession, row.session_id) if row is not None else None
    if row is None or chat is None or chat.owner_id != user_id:
        raise NotFound(f"Share link {share_id} does not exist")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.add(row)
        session.flush()
    return row


def open_share(*, session: Session, token: str, now: datetime | None = None) -> ShareLink | None:
    """The link `token` opens, or None if there is none, or it was revoked or has expired."""
    if not TOKEN_PATTERN.fullmatch(token):
        return None
    query = select(ShareLink).where(ShareLink.token_hash == hash_token(token))
    row = session.exec(query).first()
    if row is None or row.revoked_at is not None:
        return None
    if row.expires_at is not None and (now or utcnow()) >= row.expires_at:
        return None
    return row
