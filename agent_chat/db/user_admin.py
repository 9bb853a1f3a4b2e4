"""What administrators do to accounts (`app_user`): list, create, change role, disable or
enable, reset a password, rename. There is no deletion: users own conversations, so
disabling is how a person is removed (their sessions end; they cannot sign in).

Every function takes the acting user's id and raises `Forbidden` unless that user is an
active (not disabled) administrator, checked in the same transaction as the change. Writes
take the users write lock of `db/users.py` first, then read: two administrators demoting or
disabling each other at the same moment are serialised, and the second sees the first's
change, so `LastAdministrator` keeps at least one active administrator.
"""

from __future__ import annotations

from sqlmodel import Session, col, func, select

from agent_chat.db import passwords, users
from agent_chat.db.auth_sessions import revoke_user_sessions
from agent_chat.db.errors import Forbidden, LastAdministrator, ValidationFailed
from agent_chat.db.models import AppUser, UserRole, utcnow

ADMINS_ONLY = "Only an administrator can do this."


def parse_role(raw: str) -> UserRole:
    try:
        return UserRole(str(raw).strip().lower())
    except ValueError:
        raise ValidationFailed({"role": "Choose admin or member."}) from None


def active_admin(*, session: Session, user_id: int | None) -> AppUser:
    """The user `user_id` when it is an active administrator; `Forbidden` otherwise."""
    user = session.get(AppUser, user_id) if user_id is not None else None
    if user is None or user.disabled or user.role != UserRole.ADMIN.value:
        raise Forbidden(ADMINS_ONLY)
    return user


def _locked_actor(session: Session, actor_id: int) -> AppUser:
    """The write lock first (so every read after it sees the latest commit), then the
    actor's check."""
    users.lock_users(session)
    return active_admin(session=session, user_id=actor_id)


def _target(session: Session, user_id: int) -> AppUser:
    return users.get_user(session=session, user_id=user_id)


def _active_admin_count(session: Session) -> int:
    return session.exec(
        select(func.count())
        .select_from(AppUser)
        .where(AppUser.role == UserRole.ADMIN.value, col(AppUser.disabled).is_(False))
    ).one()


def _keep_an_admin(session: Session, target: AppUser, what: str) -> None:
    """Refuse to take `target` out of the active administrators if it is the last one."""
    if target.role != UserRole.ADMIN.value or target.disabled:
        return
    if _active_admin_count(session) <= 1:
        raise LastAdministrator(
            f"{target.username} is the last active administrator and cannot be {what}: "
            "make another user an administrator first."
        )


def list_users(*, session: Session, actor_id: int) -> list[AppUser]:
    """Every user, by username (disabled ones too)."""
    active_admin(session=session, user_id=actor_id)
    return list(session.exec(select(AppUser).order_by(col(AppUser.username))).all())


def create_user(
    *,
    session: Session,
    actor_id: int,
    username: str,
    password: str,
    display_name: str = "",
    role: str = UserRole.MEMBER.value,
) -> AppUser:
    """A new user; `ValidationFailed` for a bad or taken username, a short password or an
    unknown role. The password is hashed before the lock is taken."""
    name = users.normalize_username(username)
    new_role = parse_role(role)
    problem = passwords.password_problem(password)
    if problem:
        raise ValidationFailed({"password": problem})
    password_hash = passwords.hash_password(password)
    _locked_actor(session, actor_id)
    return users.create_user(
        session=session,
        username=name,
        password_hash=password_hash,
        display_name=display_name,
        role=new_role,
    )


def set_role(*, session: Session, actor_id: int, user_id: int, role: str) -> AppUser:
    """Make a user an administrator or a member; the last active administrator stays one."""
    new_role = parse_role(role)
    _locked_actor(session, actor_id)
    user = _target(session, user_id)
    if new_role is UserRole.MEMBER:
        _keep_an_admin(session, user, "made a member")
    user.role = new_role.value
    session.add(user)
    session.flush()
    return user


def set_disabled(*, session: Session, actor_id: int, user_id: int, disabled: bool) -> AppUser:
    """Disable a user (every session of theirs ends at once) or enable them again; the last
    active administrator cannot be disabled, by themselves or anyone."""
    _locked_actor(session, actor_id)
    user = _target(session, user_id)
    if disabled:
        _keep_an_admin(session, user, "disabled")
    return users.set_disabled(session=session, user_id=user_id, disabled=disabled)


def reset_password(*, session: Session, actor_id: int, user_id: int, new_password: str) -> AppUser:
    """Set a user's password without the old one; every session of that user ends."""
    problem = passwords.password_problem(new_password)
    if problem:
        raise ValidationFailed({"password": problem})
    password_hash = passwords.hash_password(new_password)
    _locked_actor(session, actor_id)
    user = _target(session, user_id)
    now = utcnow()
    user.password_hash = password_hash
    user.password_changed_at = now
    session.add(user)
    revoke_user_sessions(session=session, user_id=user_id, now=now)
    session.flush()
    return user


def rename(*, session: Session, actor_id: int, user_id: int, display_name: str) -> AppUser:
    """A user's display name (the username never changes)."""
    _locked_actor(session, actor_id)
    _target(session, user_id)
    return users.set_display_name(session=session, user_id=user_id, display_name=display_name)
