"""Store functions for single sign-on (auth/oidc*.py): the sign-in attempts waiting for the
provider's answer (`oidc_attempt`) and the identities people sign in with (`oidc_identity`).

An identity is the provider's `(issuer, subject)`, nothing else: a first sign-in makes a new
member (no password), it never takes over an account whose username or email matches. The
configured admin claim sets the role at each sign-in; a demotion that would leave no active
administrator is not made (the role is kept and the caller logs it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, col, delete, func, select

from agent_chat.db import users
from agent_chat.db.api_tokens import hash_token
from agent_chat.db.errors import StoreError, ValidationFailed
from agent_chat.db.models import AppUser, OidcAttempt, OidcIdentity, UserRole
from agent_chat.db.names import name_key

# How long the provider may take (the person types a password, maybe a second factor).
ATTEMPT_LIFETIME = timedelta(minutes=10)
MAX_TOKEN_CHARS = 100
# Attempts anyone may start (the login page is public): past this many at once, new ones wait.
MAX_OPEN_ATTEMPTS = 5000
_NOT_USERNAME = re.compile(r"[^a-z0-9._-]+")


class TooManyAttempts(StoreError):
    """MAX_OPEN_ATTEMPTS sign-ins are waiting for the provider already."""


@dataclass(frozen=True)
class Attempt:
    state: str
    nonce: str
    code_verifier: str
    redirect_uri: str
    next_path: str


@dataclass(frozen=True)
class OidcSignIn:
    """What a sign-in found: the user (None when `disabled`); `created` on a first sign-in;
    `role_note` says why a role the claim asked to change was kept."""

    user: AppUser | None
    disabled: bool = False
    created: bool = False
    role_note: str = ""


def start_attempt(
    *,
    session: Session,
    token: str,
    state: str,
    nonce: str,
    code_verifier: str,
    redirect_uri: str,
    next_path: str,
    now: datetime,
) -> None:
    """Store an attempt under the SHA-256 of the browser's cookie token; attempts past their
    lifetime go (the table stays small), and TooManyAttempts past MAX_OPEN_ATTEMPTS."""
    session.exec(delete(OidcAttempt).where(col(OidcAttempt.created_at) <= now - ATTEMPT_LIFETIME))  # type: ignore[call-overload]
    if count_attempts(session=session) >= MAX_OPEN_ATTEMPTS:
        raise TooManyAttempts(f"{MAX_OPEN_ATTEMPTS} sign-ins are waiting for the provider")
    session.add(
        OidcAttempt(
            token_hash=hash_token(token),
            state=state,
            nonce=nonce,
            code_verifier=code_verifier,
            redirect_uri=redirect_uri,
            next_path=next_path,
            created_at=now,
        )
    )
    session.flush()


def take_attempt(*, session: Session, token: str | None, now: datetime) -> Attempt | None:
    """The browser's attempt, deleted as it is read (each is used once); None when there is
    none, it was used already, or it is past its lifetime."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    row = session.exec(
        select(OidcAttempt).where(OidcAttempt.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    session.delete(row)
    session.flush()
    if now >= row.created_at + ATTEMPT_LIFETIME:
        return None
    return Attempt(row.state, row.nonce, row.code_verifier, row.redirect_uri, row.next_path)


def count_attempts(*, session: Session) -> int:
    return session.exec(select(func.count()).select_from(OidcAttempt)).one()


def find_identity(*, session: Session, issuer: str, subject: str) -> OidcIdentity | None:
    return session.exec(
        select(OidcIdentity)
        .where(OidcIdentity.issuer == issuer)
        .where(OidcIdentity.subject == subject)
    ).first()


def list_identities(*, session: Session, user_id: int) -> list[OidcIdentity]:
    return list(session.exec(select(OidcIdentity).where(OidcIdentity.user_id == user_id)).all())


def username_candidate(preferred: str, email: str) -> str:
    """A username from the provider's `preferred_username`, else the local part of `email`:
    its key (`names.name_key`), other characters as dashes, at most 64; `user` when nothing
    is left."""
    for raw in (preferred, email.partition("@")[0]):
        clean = _NOT_USERNAME.sub("-", name_key(raw)).strip("-.")[:64].strip("-.")
        if clean:
            return clean
    return "user"


def _free_username(session: Session, candidate: str) -> str:
    base = users.normalize_username(candidate)
    name, number = base, 1
    while users.find_user(session=session, username=name) is not None:
        number += 1
        suffix = f"-{number}"
        name = base[: 64 - len(suffix)] + suffix
    return name


def _active_admins_besides(session: Session, user_id: int) -> int:
    return session.exec(
        select(func.count())
        .select_from(AppUser)
        .where(AppUser.role == UserRole.ADMIN.value)
        .where(col(AppUser.disabled).is_(False))
        .where(col(AppUser.id) != user_id)
    ).one()


def _apply_admin_claim(session: Session, user: AppUser, admin: bool | None) -> str:
    """Set the role the claim says (None: no claim configured, the role stays); a note when
    a demotion was refused because it would leave no active administrator."""
    if admin is None:
        return ""
    wanted = UserRole.ADMIN.value if admin else UserRole.MEMBER.value
    if user.role == wanted:
        return ""
    if not admin:  # (under the users' write lock: see sign_in_identity)
        assert user.id is not None
        if _active_admins_besides(session, user.id) == 0:
            return "kept the admin role: it is the last active administrator"
    user.role = wanted
    session.add(user)
    return ""


def sign_in_identity(
    *,
    session: Session,
    issuer: str,
    subject: str,
    preferred_username: str,
    email: str,
    display_name: str,
    admin: bool | None,
    now: datetime,
) -> OidcSignIn:
    """The user of `(issuer, subject)`, made (a member without a password) on the first
    sign-in; the admin claim applied; `last_login_at` recorded. A disabled user is refused
    and left as they are. Runs under the users' write lock (sign-ins by a provider are rare):
    two first sign-ins at once make one account, two demotions cannot both pass."""
    users.lock_users(session)
    identity = find_identity(session=session, issuer=issuer, subject=subject)
    created = identity is None
    if identity is None:
        candidate = username_candidate(preferred_username, email)
        try:
            name = _free_username(session, candidate)
        except ValidationFailed:  # cannot happen for a cleaned candidate; be safe anyway
            name = _free_username(session, "user")
        user = users.create_user(
            session=session, username=name, display_name=display_name, passwordless=True
        )
        assert user.id is not None
        identity = OidcIdentity(issuer=issuer, subject=subject, user_id=user.id, created_at=now)
    else:
        user = users.get_user(session=session, user_id=identity.user_id)
        if user.disabled:
            return OidcSignIn(None, disabled=True)
    note = _apply_admin_claim(session, user, admin)
    user.last_login_at = now
    identity.last_login_at = now
    session.add(user)
    session.add(identity)
    session.flush()
    return OidcSignIn(user, created=created, role_note=note)
