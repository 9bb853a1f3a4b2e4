"""Server-side sessions and the wrong-password count in the store (db/auth_sessions.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session, select

from agent_chat.db import auth_sessions, users
from agent_chat.db.api_tokens import hash_token
from agent_chat.db.models import AuthSession, utcnow
from tests.support.accounts import use_cheap_hashes

DAY = timedelta(days=1)
WINDOW = timedelta(minutes=15)


@pytest.fixture(autouse=True)
def _cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


@pytest.fixture
def alice(session: Session):
    return users.create_user(
        session=session, username="alice", password="12345678", display_name="Alice A"
    )


def test_a_session_stores_only_the_hash_of_its_token(session: Session, alice) -> None:
    now = utcnow()
    new = auth_sessions.create_session(
        session=session,
        user_id=alice.id,
        lifetime=DAY,
        now=now,
        user_agent="x" * 1000,
        address="1.2.3.4",
    )
    row = session.get(AuthSession, new.session_id)
    assert row.token_hash == hash_token(new.token) and new.token not in row.token_hash
    assert row.expires_at == now + DAY and len(row.user_agent) == 300 and row.address == "1.2.3.4"
    found = auth_sessions.session_user(session=session, token=new.token, now=now, max_age=DAY)
    assert found.user_id == alice.id and found.username == "alice"
    assert found.display_name == "Alice A" and found.role == "member"


def test_expiry_revocation_and_disabled_users(session: Session, alice) -> None:
    now = utcnow()
    new = auth_sessions.create_session(session=session, user_id=alice.id, lifetime=DAY, now=now)

    def user_at(when, max_age=DAY):
        return auth_sessions.session_user(
            session=session, token=new.token, now=when, max_age=max_age
        )

    assert user_at(now + DAY - timedelta(seconds=1)) is not None
    assert user_at(now + DAY) is None
    assert user_at(now + timedelta(hours=2), max_age=timedelta(hours=1)) is None  # shortened
    for junk in (None, "", "nope", "x" * 5000):
        assert auth_sessions.session_user(session=session, token=junk, now=now, max_age=DAY) is None
    alice.disabled = True
    assert user_at(now) is None
    alice.disabled = False
    assert auth_sessions.revoke_session(session=session, token=new.token, now=now) == alice.id
    assert user_at(now) is None
    assert auth_sessions.revoke_session(session=session, token="unknown", now=now) is None


def test_last_seen_is_written_at_most_once_a_minute(session: Session, alice) -> None:
    now = utcnow()
    new = auth_sessions.create_session(session=session, user_id=alice.id, lifetime=DAY, now=now)
    row = session.get(AuthSession, new.session_id)
    auth_sessions.session_user(
        session=session, token=new.token, now=now + timedelta(seconds=30), max_age=DAY
    )
    assert row.last_seen_at == now
    later = now + timedelta(seconds=61)
    auth_sessions.session_user(session=session, token=new.token, now=later, max_age=DAY)
    assert row.last_seen_at == later


def test_revoking_a_users_sessions(session: Session, alice) -> None:
    bob = users.create_user(session=session, username="bob", password="12345678")
    now = utcnow()
    keep = auth_sessions.create_session(session=session, user_id=alice.id, lifetime=DAY, now=now)
    auth_sessions.create_session(session=session, user_id=alice.id, lifetime=DAY, now=now)
    bobs = auth_sessions.create_session(session=session, user_id=bob.id, lifetime=DAY, now=now)
    assert (
        auth_sessions.revoke_user_sessions(
            session=session, user_id=alice.id, now=now, except_id=keep.session_id
        )
        == 1
    )
    assert [
        s.id for s in auth_sessions.list_user_sessions(session=session, user_id=alice.id, now=now)
    ] == [keep.session_id]
    assert auth_sessions.revoke_user_sessions(session=session, user_id=alice.id, now=now) == 1
    assert (
        auth_sessions.list_user_sessions(session=session, user_id=bob.id, now=now)[0].id
        == bobs.session_id
    )


def test_deleting_a_user_deletes_their_sessions(session: Session, alice) -> None:
    auth_sessions.create_session(session=session, user_id=alice.id, lifetime=DAY, now=utcnow())
    session.delete(alice)
    session.flush()
    assert session.exec(select(AuthSession)).all() == []


def _wait(session: Session, address: str, username: str, now, per_address=10, per_account=5):
    return auth_sessions.failure_wait(
        session=session,
        address=address,
        username=username,
        now=now,
        window=WINDOW,
        per_address=per_address,
        per_account=per_account,
    )


def test_failures_block_per_account_and_per_address_until_the_window_passes(
    session: Session,
) -> None:
    start = utcnow()
    for n in range(5):
        assert _wait(session, "1.1.1.1", "alice", start) is None
        auth_sessions.record_failure(
            session=session,
            address=f"10.0.0.{n}",
            username="alice",
            now=start + timedelta(seconds=10 * n),
            window=WINDOW,
        )
    now = start + timedelta(seconds=40)
    assert _wait(session, "9.9.9.9", "alice", now) == pytest.approx(900 - 40)  # the account's
    assert _wait(session, "9.9.9.9", "bob", now) is None
    assert _wait(session, "9.9.9.9", "alice", start + timedelta(seconds=900.5)) is None
    for n in range(10):
        auth_sessions.record_failure(
            session=session, address="6.6.6.6", username=f"u{n}", now=now, window=WINDOW
        )
    assert _wait(session, "6.6.6.6", "bob", now) == pytest.approx(900)  # the address's
    auth_sessions.clear_failures(session=session, username="alice")
    assert _wait(session, "9.9.9.9", "alice", now) is None


def test_old_failures_are_swept(session: Session) -> None:
    start = utcnow()
    auth_sessions.record_failure(
        session=session, address="a", username="x", now=start, window=WINDOW
    )
    auth_sessions.record_failure(
        session=session,
        address="a",
        username="x",
        now=start + WINDOW + timedelta(seconds=1),
        window=WINDOW,
    )
    assert auth_sessions.count_failures(session=session) == 1
