"""Store functions for server-side sessions (`auth_session`) and the wrong-password count
(`login_failure`).

A session's token is 32 random bytes (URL-safe base64) in an HttpOnly cookie; only its SHA-256
is stored (`api_tokens.hash_token`: a random token needs no slow hash). A session is valid
while it is not revoked, not past `expires_at` nor `max_age` after it began (so lowering the
session length shortens sessions already issued), and its user is not disabled.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, col, delete, func, select, update

from agent_chat.db.api_tokens import hash_token
from agent_chat.db.models import AppUser, AuthSession, LoginFailure

# `last_seen_at` is written at most this often per session: most requests only read.
LAST_SEEN_RESOLUTION = timedelta(seconds=60)
MAX_TOKEN_CHARS = 100  # a token is 43 characters: refuse junk before hashing it
USER_AGENT_MAX_CHARS = 300


@dataclass(frozen=True)
class NewSession:
    token: str  # for the cookie, never stored
    session_id: int


@dataclass(frozen=True)
class SignedIn:
    """Who a valid session belongs to: what the gate and the pages need."""

    session_id: int
    user_id: int
    username: str
    display_name: str
    role: str
    expires_at: datetime


def create_session(
    *,
    session: Session,
    user_id: int,
    lifetime: timedelta,
    now: datetime,
    user_agent: str = "",
    address: str = "",
) -> NewSession:
    token = secrets.token_urlsafe(32)
    row = AuthSession(
        user_id=user_id,
        token_hash=hash_token(token),
        created_at=now,
        last_seen_at=now,
        expires_at=now + lifetime,
        user_agent=user_agent[:USER_AGENT_MAX_CHARS],
        address=address[:100],
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    return NewSession(token=token, session_id=row.id)


def session_user(
    *, session: Session, token: str | None, now: datetime, max_age: timedelta
) -> SignedIn | None:
    """The signed-in user of `token`, or None; one indexed query (plus, at most once a
    minute, the `last_seen_at` write)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    found = session.exec(
        select(AuthSession, AppUser)
        .join(AppUser, col(AppUser.id) == col(AuthSession.user_id))
        .where(AuthSession.token_hash == hash_token(token))
    ).first()
    if found is None:
        return None
    row, user = found
    if (
        row.revoked_at is not None
        or now >= row.expires_at
        or now >= row.created_at + max_age
        or user.disabled
    ):
        return None
    if now - row.last_seen_at >= LAST_SEEN_RESOLUTION:
        row.last_seen_at = now
        session.add(row)
        session.flush()
    assert row.id is not None and user.id is not None
    return SignedIn(
        session_id=row.id,
        user_id=user.id,
        username=user.username,
        display_name=user.display_name,
        role=user.role,
        expires_at=min(row.expires_at, row.created_at + max_age),
    )


def revoke_session(*, session: Session, token: str, now: datetime) -> int | None:
    """End the session of `token` ("Log out"); the user it belonged to, if any."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    row = session.exec(
        select(AuthSession).where(AuthSession.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = now
        session.add(row)
        session.flush()
    return row.user_id


def revoke_user_sessions(
    *, session: Session, user_id: int, now: datetime, except_id: int | None = None
) -> int:
    """End every open session of the user (but `except_id`); how many ended."""
    query = (
        update(AuthSession)
        .where(col(AuthSession.user_id) == user_id)
        .where(col(AuthSession.revoked_at).is_(None))
    )
    if except_id is not None:
        query = query.where(col(AuthSession.id) != except_id)
    result = session.exec(query.values(revoked_at=now))  # type: ignore[call-overload]
    return int(result.rowcount or 0)


def list_user_sessions(*, session: Session, user_id: int, now: datetime) -> list[AuthSession]:
    """The user's sessions that are neither revoked nor expired, newest first."""
    return list(
        session.exec(
            select(AuthSession)
            .where(AuthSession.user_id == user_id)
            .where(col(AuthSession.revoked_at).is_(None))
            .where(col(AuthSession.expires_at) > now)
            .order_by(col(AuthSession.id).desc())
        ).all()
    )


# --- the wrong-password count ----------------------------------------------------------------


def record_failure(
    *, session: Session, address: str, username: str, now: datetime, window: timedelta
) -> None:
    """One wrong password; rows older than the window go (the table stays small)."""
    session.exec(delete(LoginFailure).where(col(LoginFailure.at) <= now - window))  # type: ignore[call-overload]
    session.add(LoginFailure(address=address[:100], username=username[:64], at=now))
    session.flush()


def failure_wait(
    *,
    session: Session,
    address: str,
    username: str,
    now: datetime,
    window: timedelta,
    per_address: int,
    per_account: int,
) -> float | None:
    """Seconds until a sign-in from `address` as `username` may be tried again (None: now).
    Blocked while `per_address` failures from the address, or `per_account` for the
    username, are within the window: until the oldest of them leaves it."""
    waits = []
    for column, value, limit in (
        (LoginFailure.address, address[:100], per_address),
        (LoginFailure.username, username[:64], per_account),
    ):
        recent = (
            select(LoginFailure.at)
            .where(column == value)
            .where(col(LoginFailure.at) > now - window)
            .order_by(col(LoginFailure.at).desc())
            .limit(limit)
        )
        times = list(session.exec(recent).all())
        if len(times) >= limit:
            waits.append((times[-1] + window - now).total_seconds())
    return max(max(waits), 0.001) if waits else None


def clear_failures(*, session: Session, username: str) -> None:
    """A right password: the account's count starts again (the address's does not, so one
    account of the guesser's own cannot lift a block on guessing others)."""
    session.exec(delete(LoginFailure).where(col(LoginFailure.username) == username[:64]))  # type: ignore[call-overload]


def count_failures(*, session: Session) -> int:
    return session.exec(select(func.count()).select_from(LoginFailure)).one()
