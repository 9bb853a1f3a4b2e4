"""Accounts in the store (agent_chat/db/users.py, passwords.py): usernames, argon2 hashes,
the first administrator (race-safe, and from the environment or an old install's shared
password), sign-in checks, display names, password changes and disabling."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from agent_chat.db import auth_sessions, passwords, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import utcnow
from tests.support.accounts import use_cheap_hashes

DAY = timedelta(days=1)


@pytest.fixture(autouse=True)
def _cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


def test_usernames_are_lower_cased_and_checked(session: Session) -> None:
    user = users.create_user(session=session, username=" Alice.B-1_x ", password="12345678")
    assert user.username == "alice.b-1_x" and user.display_name == "alice.b-1_x"
    assert user.role == "member" and not user.disabled
    for bad in ("", "with space", "é", "a" * 65, "semi;colon"):
        with pytest.raises(ValidationFailed):
            users.create_user(session=session, username=bad, password="12345678")
    with pytest.raises(ValidationFailed, match="taken"):
        users.create_user(session=session, username="ALICE.b-1_X", password="12345678")
    with pytest.raises(ValidationFailed, match="at least 8"):
        users.create_user(session=session, username="bob", password="1234567")


def test_only_an_argon2_hash_is_stored(session: Session) -> None:
    user = users.create_user(session=session, username="a", password="secret-words")
    assert user.password_hash.startswith("$argon2id$")
    assert "secret-words" not in user.password_hash


def test_the_hash_is_argon2id_at_owasps_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real cost, once
    made = passwords.hash_password("secret-words")
    assert made.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert passwords.verify("secret-words", made) == (True, None)
    assert passwords.verify("other", made) == (False, None)
    assert passwords.verify("x", None) == (False, None)  # unknown user: a dummy check
    assert passwords.verify("x", "not a hash") == (False, None)


def test_a_hash_at_pwdlibs_defaults_is_remade_at_the_next_sign_in(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashes made before (pwdlib's defaults: m=64 MiB, t=3, p=4) move to OWASP's at the
    next right password; a wrong one changes nothing."""
    monkeypatch.undo()
    from pwdlib.hashers.argon2 import Argon2Hasher

    old = Argon2Hasher().hash("right-password")
    assert "$m=65536,t=3,p=4$" in old
    user = users.create_user(session=session, username="alice", password_hash=old)
    users.check_login(session=session, username="alice", password="wrong", now=utcnow())
    assert user.password_hash == old
    users.check_login(session=session, username="alice", password="right-password", now=utcnow())
    assert "$m=19456,t=2,p=1$" in user.password_hash
    remade = user.password_hash
    assert users.check_login(
        session=session, username="alice", password="right-password", now=utcnow()
    ).user
    assert user.password_hash == remade  # up to date: not re-made again


def test_check_login(session: Session) -> None:
    user = users.create_user(session=session, username="alice", password="right-password")
    now = utcnow()
    found = users.check_login(
        session=session, username=" ALICE", password="right-password", now=now
    )
    assert found.user is not None and found.user.id == user.id
    assert user.last_login_at == now
    assert (
        users.check_login(session=session, username="alice", password="wrong", now=now).user is None
    )
    assert users.check_login(session=session, username="nobody", password="x", now=now).user is None
    assert (
        users.check_login(session=session, username="bad name", password="x", now=now).user is None
    )
    users.set_disabled(session=session, user_id=user.id, disabled=True)
    disabled = users.check_login(
        session=session, username="alice", password="right-password", now=now
    )
    assert disabled.user is None and disabled.disabled
    wrong = users.check_login(session=session, username="alice", password="wrong", now=now)
    assert not wrong.disabled  # disabled is only said to whoever knows the password


def test_an_outdated_hash_is_upgraded_at_sign_in(session: Session) -> None:
    from pwdlib.hashers.argon2 import Argon2Hasher

    old = Argon2Hasher(time_cost=1, memory_cost=512, parallelism=1).hash("right-password")
    user = users.create_user(session=session, username="alice", password_hash=old)
    users.check_login(session=session, username="alice", password="right-password", now=utcnow())
    assert user.password_hash != old and "m=1024" in user.password_hash


def test_the_first_admin_is_made_once(session: Session) -> None:
    admin = users.create_first_admin(session=session, username="Root", password="12345678")
    assert admin.role == "admin" and admin.username == "root"
    with pytest.raises(users.AlreadySetUp):
        users.create_first_admin(session=session, username="other", password="12345678")
    assert users.count_users(session=session) == 1


def test_two_first_admins_at_once_make_one(engine: Engine) -> None:
    """Two workers' setup transactions at the same moment: the second waits for the first's
    lock, then sees its user."""
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def attempt(name: str) -> None:
        barrier.wait()
        try:
            with open_session(engine) as session:
                users.create_first_admin(session=session, username=name, password="12345678")
            outcomes.append("made")
        except users.AlreadySetUp:
            outcomes.append("refused")

    threads = [threading.Thread(target=attempt, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["made", "refused"]
    with open_session(engine) as session:
        assert users.count_users(session=session) == 1


def test_the_first_admin_from_the_environment(session: Session) -> None:
    how = users.ensure_first_admin(
        session=session, admin_user="Boss", admin_password="boss-password", legacy_password=None
    )
    assert how and "boss" in how
    boss = users.find_user(session=session, username="boss")
    assert boss.role == "admin"
    assert users.check_login(
        session=session, username="boss", password="boss-password", now=utcnow()
    ).user
    # Once a user exists nothing more happens at start.
    assert (
        users.ensure_first_admin(
            session=session, admin_user="x", admin_password="12345678", legacy_password="y"
        )
        is None
    )


def test_a_short_admin_password_from_the_environment_stops_the_start(session: Session) -> None:
    with pytest.raises(ValueError, match="AGENT_CHAT_ADMIN_PASSWORD"):
        users.ensure_first_admin(
            session=session, admin_user="boss", admin_password="short", legacy_password=None
        )


def test_an_old_installs_password_becomes_admins(session: Session) -> None:
    """AGENT_CHAT_PASSWORD (even one shorter than today's minimum) keeps working for the
    administrator `admin` until they change it."""
    how = users.ensure_first_admin(
        session=session, admin_user=None, admin_password=None, legacy_password="old"
    )
    assert how and "AGENT_CHAT_PASSWORD" in how
    admin = users.find_user(session=session, username="admin")
    assert admin.role == "admin"
    assert users.check_login(session=session, username="admin", password="old", now=utcnow()).user
    assert (
        users.ensure_first_admin(
            session=session, admin_user=None, admin_password=None, legacy_password=None
        )
        is None
    )


def test_nothing_configured_leaves_the_setup_page_to_do_it(session: Session) -> None:
    assert (
        users.ensure_first_admin(
            session=session, admin_user="boss", admin_password=None, legacy_password=None
        )
        is None
    )
    assert not users.has_users(session=session)


def test_display_name(session: Session) -> None:
    user = users.create_user(session=session, username="a", password="12345678")
    assert (
        users.set_display_name(
            session=session, user_id=user.id, display_name="  Ada  L "
        ).display_name
        == "Ada L"
    )
    with pytest.raises(ValidationFailed):
        users.set_display_name(session=session, user_id=user.id, display_name="   ")


def test_changing_the_password_ends_every_other_session(session: Session) -> None:
    user = users.create_user(session=session, username="a", password="first-password")
    now = utcnow()
    this = auth_sessions.create_session(session=session, user_id=user.id, lifetime=DAY, now=now)
    other = auth_sessions.create_session(session=session, user_id=user.id, lifetime=DAY, now=now)
    with pytest.raises(ValidationFailed, match="current password"):
        users.change_password(
            session=session, user_id=user.id, current_password="nope", new_password="second-one"
        )
    with pytest.raises(ValidationFailed, match="at least 8"):
        users.change_password(
            session=session, user_id=user.id, current_password="first-password", new_password="x"
        )
    before = user.password_changed_at
    users.change_password(
        session=session,
        user_id=user.id,
        current_password="first-password",
        new_password="second-password",
        keep_session_id=this.session_id,
    )
    assert user.password_changed_at >= before

    def alive(token: str) -> bool:
        found = auth_sessions.session_user(session=session, token=token, now=utcnow(), max_age=DAY)
        return found is not None

    assert alive(this.token) and not alive(other.token)
    assert users.check_login(
        session=session, username="a", password="second-password", now=now
    ).user
    assert not users.check_login(
        session=session, username="a", password="first-password", now=now
    ).user


def test_the_first_administrator_is_the_oldest_admin(session: Session) -> None:
    # Who inherits hermes' shared memory of an install from before accounts.
    assert users.first_admin_id(session=session) is None
    first = users.create_first_admin(session=session, username="boss", password="password-1")
    users.create_user(session=session, username="member", password="password-2")
    later = users.create_user(
        session=session, username="second", password="password-3", role=users.UserRole.ADMIN
    )
    later.created_at = first.created_at + timedelta(seconds=1)
    session.add(later)
    session.flush()
    assert users.first_admin_id(session=session) == first.id
    first.role = "member"  # no longer an administrator: the next oldest one is
    session.add(first)
    session.flush()
    assert users.first_admin_id(session=session) == later.id
