"""Store functions for accounts (`app_user`).

A username is 1-64 characters of letters, digits and `._-`, stored as its key (`names.name_key`:
case-folded, compatibility forms as plain letters), so `Alice`, `alice` and `ａｌｉｃｅ` are one
person and the unique constraint on `username` is the key's. The first administrator is made by `create_first_admin`, which
holds a write lock while it checks that there is no user yet: two requests at once make one.
Disabling a user or changing their password ends their sessions in the same transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, inspect, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, select

from agent_chat.db import passwords
from agent_chat.db.auth_sessions import revoke_user_sessions
from agent_chat.db.engine import make_engine
from agent_chat.db.errors import NotFound, StoreError, ValidationFailed
from agent_chat.db.models import ApiToken, AppUser, ChatFolder, ChatSession, UserRole, utcnow
from agent_chat.db.names import name_key, violates

USERNAME = re.compile(r"[a-z0-9._-]{1,64}")
DISPLAY_NAME_MAX_CHARS = 100
TAKEN = "That username is taken."


class AlreadySetUp(StoreError):
    """The first administrator exists already (someone else was quicker)."""


@dataclass(frozen=True)
class LoginCheck:
    """What a password check found: the user when it matched; `disabled` when it matched
    an account that may not sign in."""

    user: AppUser | None
    disabled: bool = False


def normalize_username(raw: str) -> str:
    name = name_key(raw)
    if not USERNAME.fullmatch(name):
        raise ValidationFailed(
            {"username": "Use 1-64 letters, digits, dots, dashes or underscores."}
        )
    return name


def _display_name(raw: str, fallback: str) -> str:
    clean = " ".join(raw.split())[:DISPLAY_NAME_MAX_CHARS]
    return clean or fallback


def _check_password(password: str, field: str = "password") -> None:
    problem = passwords.password_problem(password)
    if problem:
        raise ValidationFailed({field: problem})


def count_users(*, session: Session) -> int:
    return session.exec(select(func.count()).select_from(AppUser)).one()


def has_users(*, session: Session) -> bool:
    return session.exec(select(AppUser.id).limit(1)).first() is not None


def has_users_at(url: str) -> bool | None:
    """Whether the database at `url` holds a user (False before its tables exist); None
    when it cannot be read now (the app's own start then says why)."""
    engine = make_engine(url)
    try:
        if not inspect(engine).has_table(AppUser.__tablename__):
            return False
        with Session(engine) as session:
            return has_users(session=session)
    except SQLAlchemyError:
        return None
    finally:
        engine.dispose()


def get_user(*, session: Session, user_id: int) -> AppUser:
    row = session.get(AppUser, user_id)
    if row is None:
        raise NotFound(f"user {user_id} does not exist")
    return row


def find_user(*, session: Session, username: str) -> AppUser | None:
    name = name_key(username)
    return session.exec(select(AppUser).where(AppUser.username == name)).first()


def create_user(
    *,
    session: Session,
    username: str,
    password: str | None = None,
    password_hash: str | None = None,
    display_name: str = "",
    role: UserRole = UserRole.MEMBER,
    passwordless: bool = False,
) -> AppUser:
    """A new user, from a password (checked, then hashed) or a hash made elsewhere; or, with
    `passwordless`, none (single sign-on: the password form cannot sign them in)."""
    name = normalize_username(username)
    if password_hash is None and not passwordless:
        _check_password(password or "")
        password_hash = passwords.hash_password(password or "")
    if find_user(session=session, username=name) is not None:
        raise ValidationFailed({"username": TAKEN})
    row = AppUser(
        username=name,
        display_name=_display_name(display_name, name),
        password_hash=password_hash,
        role=UserRole(role).value,
    )
    session.add(row)
    try:
        session.flush()
    except IntegrityError as exc:  # taken since the check (a caller without `lock_users`)
        if violates(exc, constraint="uq_app_user_username", columns=("app_user.username",)):
            raise ValidationFailed({"username": TAKEN}) from exc
        raise
    return row


def lock_users(session: Session) -> None:
    """Take the users write lock (`create_first_admin`, `db/user_admin.py` check under it):
    a second caller waits for the first's commit, then sees its change. Take it before
    reading what it guards."""
    if session.get_bind().dialect.name == "postgresql":
        session.exec(text("LOCK TABLE app_user IN SHARE ROW EXCLUSIVE MODE"))  # type: ignore[call-overload]
    else:  # SQLite: a write statement (matching nothing) takes the database's write lock
        session.exec(text("UPDATE app_user SET id = id WHERE 0 = 1"))  # type: ignore[call-overload]


def create_first_admin(
    *,
    session: Session,
    username: str,
    password: str | None = None,
    password_hash: str | None = None,
    display_name: str = "",
) -> AppUser:
    """The first user, an administrator; `AlreadySetUp` when any user exists."""
    name = normalize_username(username)  # invalid input fails before the lock is taken
    if password_hash is None:
        _check_password(password or "")
        password_hash = passwords.hash_password(password or "")
    lock_users(session)
    if has_users(session=session):
        raise AlreadySetUp("the first administrator exists already")
    admin = create_user(
        session=session,
        username=name,
        password_hash=password_hash,
        display_name=display_name,
        role=UserRole.ADMIN,
    )
    _adopt_ownerless(session, admin.id)
    return admin


def _adopt_ownerless(session: Session, user_id: int | None) -> None:
    """What an install from before accounts made (no owner) becomes the first admin's."""
    owned = ((ChatSession, "owner_id"), (ChatFolder, "owner_id"), (ApiToken, "user_id"))
    for table, column in owned:
        where = getattr(table, column).is_(None)
        session.execute(update(table).where(where).values({column: user_id}))


def check_login(*, session: Session, username: str, password: str, now: datetime) -> LoginCheck:
    """Check a sign-in. An unknown or malformed username, or a user without a password
    (single sign-on), costs a hash verification too and fails alike. A right password records
    `last_login_at` (and upgrades an outdated hash)."""
    name = name_key(username)
    user = find_user(session=session, username=name) if USERNAME.fullmatch(name) else None
    ok, new_hash = passwords.verify(password, user.password_hash if user else None)
    if not ok or user is None:
        return LoginCheck(None)
    if user.disabled:
        return LoginCheck(None, disabled=True)
    if new_hash:
        user.password_hash = new_hash
    user.last_login_at = now
    session.add(user)
    session.flush()
    return LoginCheck(user)


def set_display_name(*, session: Session, user_id: int, display_name: str) -> AppUser:
    user = get_user(session=session, user_id=user_id)
    clean = _display_name(display_name, "")
    if not clean:
        raise ValidationFailed({"display_name": "Give a name to show."})
    user.display_name = clean
    session.add(user)
    session.flush()
    return user


def change_password(
    *,
    session: Session,
    user_id: int,
    current_password: str,
    new_password: str,
    keep_session_id: int | None = None,
) -> AppUser:
    """A new password, given the current one; every session of the user except
    `keep_session_id` (the browser that changed it) ends."""
    user = get_user(session=session, user_id=user_id)
    if user.password_hash is None:
        raise ValidationFailed(
            {"current_password": "This account signs in with single sign-on: it has no password."}
        )
    ok, _ = passwords.verify(current_password, user.password_hash)
    if not ok:
        raise ValidationFailed({"current_password": "The current password is wrong."})
    _check_password(new_password, "new_password")
    now = utcnow()
    user.password_hash = passwords.hash_password(new_password)
    user.password_changed_at = now
    session.add(user)
    revoke_user_sessions(session=session, user_id=user_id, now=now, except_id=keep_session_id)
    session.flush()
    return user


def set_disabled(*, session: Session, user_id: int, disabled: bool) -> AppUser:
    """Disable (every session ends) or enable a user."""
    user = get_user(session=session, user_id=user_id)
    user.disabled = disabled
    session.add(user)
    if disabled:
        revoke_user_sessions(session=session, user_id=user_id, now=utcnow())
    session.flush()
    return user


def ensure_first_admin(
    *,
    session: Session,
    admin_user: str | None,
    admin_password: str | None,
    legacy_password: str | None,
) -> str | None:
    """At start, with no user yet: `AGENT_CHAT_ADMIN_USER`/`_PASSWORD` make the admin, else
    an old install's `AGENT_CHAT_PASSWORD` becomes the password of administrator `admin` (or
    `admin_user`). What was done, for the log; None when nothing was."""
    if has_users(session=session):
        return None
    if admin_user and admin_password:
        how = f"created administrator {name_key(admin_user)!r} from AGENT_CHAT_ADMIN_USER"
        password_hash = None
    elif legacy_password:
        admin_user = admin_user or "admin"
        how = (
            f"created administrator {name_key(admin_user)!r} with the password of "
            "AGENT_CHAT_PASSWORD (an install from before accounts); sign in with that "
            "username and password, then change it on the account page"
        )
        # The old shared password may be shorter than today's minimum: it is kept as it
        # was (hashed), so the install keeps working until the administrator changes it.
        password_hash = passwords.hash_password(legacy_password)
    else:
        return None
    try:
        create_first_admin(
            session=session,
            username=admin_user,
            password=admin_password,
            password_hash=password_hash,
            display_name="Administrator",
        )
    except AlreadySetUp:
        return None
    except ValidationFailed as exc:
        raise ValueError(f"AGENT_CHAT_ADMIN_USER/AGENT_CHAT_ADMIN_PASSWORD: {exc}") from exc
    return how


def first_admin_id(*, session: Session) -> int | None:
    """The first administrator (the oldest one): who inherits what an install from before
    accounts kept for everyone, e.g. hermes' one shared memory."""
    query = (
        select(AppUser.id)
        .where(AppUser.role == UserRole.ADMIN.value)
        .order_by(AppUser.created_at, AppUser.id)  # type: ignore[arg-type]
        .limit(1)
    )
    return session.exec(query).first()
