"""Store functions for personal API tokens (`api_token`).

A token is `acht_` + 32 random bytes (URL-safe base64): far too much entropy to guess, so a
plain SHA-256 is the right hash (a slow password hash protects low-entropy secrets). Only the
hash and a short prefix are stored; the token is returned once, by `create_token`.

A token belongs to a person (`user_id`): only they list or revoke it, and it acts only on
their data (`verify_token` returns whose it is).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ApiToken, AppUser, utcnow

TOKEN_PREFIX = "acht_"
NAME_MAX_CHARS = 100
SHOWN_PREFIX_CHARS = 12
# `last_used_at` is written at most this often per token: a script streaming many requests
# should not turn every read into a write.
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class NewToken:
    token: str  # shown once, never stored
    row: ApiToken


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(*, session: Session, user_id: int, name: str) -> NewToken:
    clean = " ".join(name.split())[:NAME_MAX_CHARS]
    if not clean:
        raise ValidationFailed({"name": "Give the token a name (what will use it)."})
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(
        user_id=user_id,
        name=clean,
        token_hash=hash_token(token),
        prefix=token[:SHOWN_PREFIX_CHARS],
    )
    session.add(row)
    session.flush()
    return NewToken(token=token, row=row)


def list_tokens(*, session: Session, user_id: int, include_revoked: bool = False) -> list[ApiToken]:
    query = select(ApiToken).where(col(ApiToken.user_id) == user_id)
    if not include_revoked:
        query = query.where(col(ApiToken.revoked_at).is_(None))
    return list(session.exec(query.order_by(col(ApiToken.id).desc())).all())


def revoke_token(*, session: Session, user_id: int, token_id: int) -> ApiToken:
    row = session.get(ApiToken, token_id)
    if row is None or row.user_id != user_id:
        raise NotFound(f"API token {token_id} does not exist")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.add(row)
        session.flush()
    return row


def verify_token(*, session: Session, token: str) -> int | None:
    """The id of the user `token` acts for, if it is a token that is not revoked, of a user
    who may sign in; None otherwise. Records when it was last used."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    query = (
        select(ApiToken, AppUser.disabled)
        .join(AppUser, col(AppUser.id) == ApiToken.user_id)
        .where(ApiToken.token_hash == hash_token(token))
    )
    found = session.exec(query).first()
    # The lookup is by hash, so comparing hashes again in constant time adds nothing.
    if found is None or found[0].revoked_at is not None or found[1]:
        return None
    row = found[0]
    now = utcnow()
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        row.last_used_at = now
        session.add(row)
        session.flush()
    return row.user_id
