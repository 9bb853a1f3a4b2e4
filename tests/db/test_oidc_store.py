"""Single sign-on in the store (agent_chat/db/oidc.py): attempts used once and expiring,
identities that provision a member without a password, never a match by username or email,
the admin claim promoting and demoting (never the last active administrator), disabled users,
and the migration keeping accounts and their sessions."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine
from sqlmodel import Session

from agent_chat.db import auth_sessions, oidc, passwords, users
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import UserRole, utcnow
from tests.support.accounts import use_cheap_hashes
from tests.support.databases import alembic_config

ISSUER = "https://id.example.com"
PASSWORD = "a password of the owner"


@pytest.fixture(autouse=True)
def _cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


def _sign_in(session: Session, subject: str, *, admin: bool | None = None, **claims: str):
    return oidc.sign_in_identity(
        session=session,
        issuer=claims.pop("issuer", ISSUER),
        subject=subject,
        preferred_username=claims.get("preferred_username", ""),
        email=claims.get("email", ""),
        display_name=claims.get("name", ""),
        admin=admin,
        now=utcnow(),
    )


def _attempt(session: Session, token: str, now, state: str = "st") -> None:
    oidc.start_attempt(
        session=session,
        token=token,
        state=state,
        nonce="n",
        code_verifier="v" * 50,
        redirect_uri="http://127.0.0.1/auth/oidc/callback",
        next_path="/chat/x",
        now=now,
    )


def test_an_attempt_is_taken_once_and_only_by_its_token(session: Session) -> None:
    now = utcnow()
    _attempt(session, "browser-token", now)
    assert oidc.take_attempt(session=session, token="another-token", now=now) is None
    taken = oidc.take_attempt(session=session, token="browser-token", now=now)
    assert taken is not None and (taken.state, taken.next_path) == ("st", "/chat/x")
    assert oidc.take_attempt(session=session, token="browser-token", now=now) is None
    assert oidc.take_attempt(session=session, token=None, now=now) is None


def test_an_old_attempt_has_expired_and_old_rows_go(session: Session) -> None:
    then = utcnow()
    _attempt(session, "slow", then)
    late = then + oidc.ATTEMPT_LIFETIME + timedelta(seconds=1)
    assert oidc.take_attempt(session=session, token="slow", now=late) is None
    _attempt(session, "old", then)
    _attempt(session, "new", late)  # starting one clears those past their lifetime
    assert oidc.count_attempts(session=session) == 1


def test_attempts_past_the_cap_wait(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oidc, "MAX_OPEN_ATTEMPTS", 2)
    now = utcnow()
    _attempt(session, "one", now)
    _attempt(session, "two", now)
    with pytest.raises(oidc.TooManyAttempts):
        _attempt(session, "three", now)
    _attempt(session, "later", now + oidc.ATTEMPT_LIFETIME)  # the old ones have gone


def test_a_first_sign_in_makes_a_member_without_a_password(session: Session) -> None:
    first = _sign_in(session, "sub-1", preferred_username="Grace.Hopper", name="Grace Hopper")
    assert first.created and first.user is not None
    user = first.user
    assert (user.username, user.display_name, user.role) == (
        "grace.hopper",
        "Grace Hopper",
        "member",
    )
    assert user.password_hash is None and user.last_login_at is not None
    # The password form cannot sign them in, whatever is typed.
    for password in ("", "anything at all"):
        check = users.check_login(
            session=session, username="grace.hopper", password=password, now=utcnow()
        )
        assert check.user is None and not check.disabled
    with pytest.raises(ValidationFailed, match="single sign-on"):
        users.change_password(
            session=session, user_id=user.id, current_password="", new_password=PASSWORD
        )
    again = _sign_in(session, "sub-1", preferred_username="someone-else")
    assert not again.created and again.user is not None and again.user.id == user.id
    assert users.count_users(session=session) == 1
    (identity,) = oidc.list_identities(session=session, user_id=user.id)
    assert (identity.issuer, identity.subject) == (ISSUER, "sub-1")


def test_a_user_without_a_password_costs_one_hash_check_like_an_unknown_name(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No timing difference: a passwordless account is checked against the dummy hash, once,
    exactly like a name that does not exist or a wrong password."""
    users.create_user(session=session, username="has-password", password=PASSWORD)
    _sign_in(session, "sso-only", preferred_username="sso-only")
    hasher = passwords._hasher()
    checked: list[str] = []

    class Counting:
        def verify(self, password: str, hashed: str) -> bool:
            checked.append(hashed)
            return hasher.verify(password, hashed)

        def verify_and_update(self, password: str, hashed: str):
            checked.append(hashed)
            return hasher.verify_and_update(password, hashed)

    monkeypatch.setattr(passwords, "_hasher", lambda: Counting())
    for name in ("sso-only", "nobody-here", "has-password"):
        checked.clear()
        check = users.check_login(session=session, username=name, password="guess", now=utcnow())
        assert check.user is None and len(checked) == 1, name
        if name != "has-password":
            assert checked == [passwords._dummy_hash()], name


def test_a_matching_username_or_email_is_never_taken_over(session: Session) -> None:
    owner = users.create_user(session=session, username="alice", password=PASSWORD)
    found = _sign_in(session, "attacker", preferred_username="Alice", email="alice@example.com")
    assert found.user is not None and found.user.id != owner.id
    assert found.user.username == "alice-2"
    third = _sign_in(session, "third", email="alice@corp.example")
    assert third.user is not None and third.user.username == "alice-3"
    assert oidc.list_identities(session=session, user_id=owner.id) == []
    # The same subject at another issuer is another person.
    other = _sign_in(session, "attacker", issuer="https://other.example", preferred_username="x")
    assert other.created


@pytest.mark.parametrize(
    ("preferred", "email", "expected"),
    [
        ("J. Doe", "", "j.-doe"),
        ("", "Jane.Doe+chat@example.com", "jane.doe-chat"),
        ("ÄÖÜ", "", "user"),
        ("", "", "user"),
        ("x" * 80, "", "x" * 64),
        ("-.weird.-", "", "weird"),
    ],
)
def test_usernames_from_claims_are_normalised(preferred: str, email: str, expected: str) -> None:
    candidate = oidc.username_candidate(preferred, email)
    assert candidate == expected
    assert users.normalize_username(candidate) == expected


def test_a_long_taken_username_gets_a_suffix_within_64_characters(session: Session) -> None:
    users.create_user(session=session, username="y" * 64, password=PASSWORD)
    found = _sign_in(session, "long", preferred_username="y" * 70)
    assert found.user is not None and found.user.username == "y" * 62 + "-2"


def test_the_admin_claim_promotes_and_demotes(session: Session) -> None:
    users.create_user(session=session, username="root", password=PASSWORD, role=UserRole.ADMIN)
    first = _sign_in(session, "boss", preferred_username="boss", admin=True)
    assert first.user is not None and first.user.role == "admin"  # admin from the first sign-in
    demoted = _sign_in(session, "boss", admin=False)
    assert demoted.user is not None and demoted.user.role == "member" and not demoted.role_note
    promoted = _sign_in(session, "boss", admin=True)
    assert promoted.user is not None and promoted.user.role == "admin"
    # Without a configured claim (None) the role stays whatever it is.
    kept = _sign_in(session, "boss", admin=None)
    assert kept.user is not None and kept.user.role == "admin"


def test_the_last_active_administrator_is_never_demoted(session: Session) -> None:
    only = _sign_in(session, "only-admin", preferred_username="only", admin=True)
    assert only.user is not None and only.user.role == "admin"
    kept = _sign_in(session, "only-admin", admin=False)
    assert kept.user is not None and kept.user.role == "admin"
    assert "last active administrator" in kept.role_note
    # A disabled administrator does not count as another one.
    other = users.create_user(session=session, username="gone", password=PASSWORD, role="admin")
    users.set_disabled(session=session, user_id=other.id, disabled=True)
    assert _sign_in(session, "only-admin", admin=False).user.role == "admin"
    users.set_disabled(session=session, user_id=other.id, disabled=False)
    assert _sign_in(session, "only-admin", admin=False).user.role == "member"


def test_a_disabled_user_is_refused_and_left_alone(session: Session) -> None:
    made = _sign_in(session, "sub-d", preferred_username="dee")
    assert made.user is not None
    users.set_disabled(session=session, user_id=made.user.id, disabled=True)
    refused = _sign_in(session, "sub-d", admin=True)
    assert refused.user is None and refused.disabled
    assert users.get_user(session=session, user_id=made.user.id).role == "member"


def test_two_first_sign_ins_at_once_make_one_account(engine: Engine) -> None:
    barrier = threading.Barrier(2)
    found: list[int] = []

    def sign_in() -> None:
        barrier.wait()
        with open_session(engine) as session:
            outcome = _sign_in(session, "racer", preferred_username="racer")
            assert outcome.user is not None and outcome.user.id is not None
            found.append(outcome.user.id)

    threads = [threading.Thread(target=sign_in) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(found) == 2 and found[0] == found[1]
    with open_session(engine) as session:
        assert users.count_users(session=session) == 1


def test_the_migration_keeps_accounts_and_sessions(empty_db_url: str) -> None:
    command.upgrade(alembic_config(empty_db_url), "6d1e8f2a4b7c")
    engine = make_engine(empty_db_url)
    try:
        with open_session(engine) as session:
            user = users.create_user(session=session, username="kept", password=PASSWORD)
            auth_sessions.create_session(
                session=session, user_id=user.id, lifetime=timedelta(hours=1), now=utcnow()
            )
        engine.dispose()
        migrate(empty_db_url)
        engine = make_engine(empty_db_url)
        columns = {c["name"]: c for c in sa.inspect(engine).get_columns("app_user")}
        assert columns["password_hash"]["nullable"]
        with open_session(engine) as session:
            check = users.check_login(
                session=session, username="kept", password=PASSWORD, now=utcnow()
            )
            assert check.user is not None
            assert (
                len(
                    auth_sessions.list_user_sessions(
                        session=session, user_id=check.user.id, now=utcnow()
                    )
                )
                == 1
            )
            _sign_in(session, "new-person", preferred_username="new")
        engine.dispose()
        # Down again: the user without a password gets an empty hash that never matches.
        command.downgrade(alembic_config(empty_db_url), "6d1e8f2a4b7c")
        engine = make_engine(empty_db_url)
        with open_session(engine) as session:
            check = users.check_login(session=session, username="new", password="", now=utcnow())
            assert check.user is None
            assert users.count_users(session=session) == 2
    finally:
        engine.dispose()
