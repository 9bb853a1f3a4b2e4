"""Administrators manage accounts (agent_chat/db/user_admin.py): every function and every
refusal (a member, a disabled administrator, a bad input, the last administrator), and the
last administrator kept when two transactions demote or disable at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from agent_chat.db import auth_sessions, user_admin, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import Forbidden, LastAdministrator, NotFound, ValidationFailed
from agent_chat.db.models import AppUser, utcnow
from tests.support.accounts import use_cheap_hashes

DAY = timedelta(days=1)


@pytest.fixture(autouse=True)
def _cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


def _user(session: Session, name: str, role: str = "member", disabled: bool = False) -> AppUser:
    user = users.create_user(session=session, username=name, password="password-" + name)
    user.role, user.disabled = role, disabled
    session.add(user)
    session.flush()
    return user


def _alive(session: Session, token: str) -> bool:
    return (
        auth_sessions.session_user(session=session, token=token, now=utcnow(), max_age=DAY)
        is not None
    )


def _admins(session: Session) -> list[str]:
    found = session.exec(select(AppUser).where(AppUser.role == "admin")).all()
    return sorted(u.username for u in found if not u.disabled)


def test_list_users(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    _user(session, "carol")
    _user(session, "alice", disabled=True)
    listed = user_admin.list_users(session=session, actor_id=boss.id)
    assert [u.username for u in listed] == ["alice", "boss", "carol"]


def test_create_user(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    made = user_admin.create_user(
        session=session,
        actor_id=boss.id,
        username=" Dora ",
        display_name="Dora the Explorer",
        password="doras-password",
        role="member",
    )
    assert (made.username, made.display_name, made.role, made.disabled) == (
        "dora",
        "Dora the Explorer",
        "member",
        False,
    )
    assert users.check_login(
        session=session, username="dora", password="doras-password", now=utcnow()
    ).user
    admin = user_admin.create_user(
        session=session, actor_id=boss.id, username="eve", password="eves-password", role="ADMIN"
    )
    assert admin.role == "admin" and admin.display_name == "eve"


@pytest.mark.parametrize(
    ("fields", "field", "text"),
    [
        ({"username": "dora", "password": "another-one"}, "username", "taken"),
        ({"username": "DORA", "password": "another-one"}, "username", "taken"),
        ({"username": "bad name", "password": "another-one"}, "username", "letters"),
        ({"username": "fred", "password": "short"}, "password", "at least 8"),
        ({"username": "fred", "password": "long enough", "role": "owner"}, "role", "admin or"),
    ],
)
def test_create_user_refuses_bad_input(
    session: Session, fields: dict, field: str, text: str
) -> None:
    boss = _user(session, "boss", "admin")
    _user(session, "dora")
    with pytest.raises(ValidationFailed) as refused:
        user_admin.create_user(session=session, actor_id=boss.id, **fields)
    assert text in refused.value.field_errors[field]
    assert users.find_user(session=session, username="fred") is None


def test_set_role(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    carol = _user(session, "carol")
    assert (
        user_admin.set_role(session=session, actor_id=boss.id, user_id=carol.id, role="admin").role
        == "admin"
    )
    # Two administrators: either may now become a member, themselves included.
    assert (
        user_admin.set_role(session=session, actor_id=boss.id, user_id=boss.id, role="member").role
        == "member"
    )
    with pytest.raises(ValidationFailed, match="admin or member"):
        user_admin.set_role(session=session, actor_id=carol.id, user_id=boss.id, role="root")
    with pytest.raises(NotFound):
        user_admin.set_role(session=session, actor_id=carol.id, user_id=9999, role="member")


def test_the_last_administrator_cannot_be_demoted(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    _user(session, "old", "admin", disabled=True)  # a disabled administrator does not count
    with pytest.raises(LastAdministrator, match="last active administrator"):
        user_admin.set_role(session=session, actor_id=boss.id, user_id=boss.id, role="member")
    assert boss.role == "admin"
    # Making the last administrator an administrator again changes nothing and is allowed.
    user_admin.set_role(session=session, actor_id=boss.id, user_id=boss.id, role="admin")


def test_disable_and_enable(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    carol = _user(session, "carol")
    now = utcnow()
    one = auth_sessions.create_session(session=session, user_id=carol.id, lifetime=DAY, now=now)
    two = auth_sessions.create_session(session=session, user_id=carol.id, lifetime=DAY, now=now)
    mine = auth_sessions.create_session(session=session, user_id=boss.id, lifetime=DAY, now=now)
    assert user_admin.set_disabled(
        session=session, actor_id=boss.id, user_id=carol.id, disabled=True
    ).disabled
    assert not _alive(session, one.token) and not _alive(session, two.token)
    assert _alive(session, mine.token)
    assert users.check_login(
        session=session, username="carol", password="password-carol", now=now
    ).disabled
    assert not user_admin.set_disabled(
        session=session, actor_id=boss.id, user_id=carol.id, disabled=False
    ).disabled
    assert users.check_login(
        session=session, username="carol", password="password-carol", now=now
    ).user
    assert not _alive(session, one.token)  # enabling does not bring old sessions back


def test_the_last_administrator_cannot_be_disabled(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    with pytest.raises(LastAdministrator, match="cannot be disabled"):
        user_admin.set_disabled(session=session, actor_id=boss.id, user_id=boss.id, disabled=True)
    assert not boss.disabled
    # With a second administrator, one may disable themselves (and is then refused).
    other = _user(session, "other", "admin")
    user_admin.set_disabled(session=session, actor_id=boss.id, user_id=boss.id, disabled=True)
    with pytest.raises(Forbidden):
        user_admin.list_users(session=session, actor_id=boss.id)
    with pytest.raises(LastAdministrator):
        user_admin.set_disabled(session=session, actor_id=other.id, user_id=other.id, disabled=True)


def test_reset_password_ends_every_session_of_that_user(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    carol = _user(session, "carol")
    now = utcnow()
    hers = auth_sessions.create_session(session=session, user_id=carol.id, lifetime=DAY, now=now)
    mine = auth_sessions.create_session(session=session, user_id=boss.id, lifetime=DAY, now=now)
    before = carol.password_changed_at
    with pytest.raises(ValidationFailed, match="at least 8"):
        user_admin.reset_password(
            session=session, actor_id=boss.id, user_id=carol.id, new_password="1234567"
        )
    assert _alive(session, hers.token)
    user_admin.reset_password(
        session=session, actor_id=boss.id, user_id=carol.id, new_password="a new password"
    )
    assert carol.password_changed_at >= before
    assert not _alive(session, hers.token) and _alive(session, mine.token)
    assert users.check_login(
        session=session, username="carol", password="a new password", now=now
    ).user
    assert not users.check_login(
        session=session, username="carol", password="password-carol", now=now
    ).user


def test_rename(session: Session) -> None:
    boss = _user(session, "boss", "admin")
    carol = _user(session, "carol")
    renamed = user_admin.rename(
        session=session, actor_id=boss.id, user_id=carol.id, display_name=" Carol  C "
    )
    assert renamed.display_name == "Carol C" and renamed.username == "carol"
    with pytest.raises(ValidationFailed):
        user_admin.rename(session=session, actor_id=boss.id, user_id=carol.id, display_name="  ")


ACTIONS: dict[str, Callable[..., object]] = {
    "list": lambda s, a, t: user_admin.list_users(session=s, actor_id=a),
    "create": lambda s, a, t: user_admin.create_user(
        session=s, actor_id=a, username="mallory", password="mallorys-password", role="admin"
    ),
    "role": lambda s, a, t: user_admin.set_role(session=s, actor_id=a, user_id=a, role="admin"),
    "disable": lambda s, a, t: user_admin.set_disabled(
        session=s, actor_id=a, user_id=t, disabled=True
    ),
    "enable": lambda s, a, t: user_admin.set_disabled(
        session=s, actor_id=a, user_id=a, disabled=False
    ),
    "reset": lambda s, a, t: user_admin.reset_password(
        session=s, actor_id=a, user_id=t, new_password="taken over!"
    ),
    "rename": lambda s, a, t: user_admin.rename(
        session=s, actor_id=a, user_id=t, display_name="Pwned"
    ),
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("actor", ["member", "disabled admin", "nobody"])
def test_only_an_active_administrator_may(session: Session, action: str, actor: str) -> None:
    boss = _user(session, "boss", "admin")
    if actor == "member":
        actor_id = _user(session, "carol").id
    elif actor == "disabled admin":
        actor_id = _user(session, "old", "admin", disabled=True).id
    else:
        actor_id = 9999
    with pytest.raises(Forbidden, match="Only an administrator"):
        ACTIONS[action](session, actor_id, boss.id)
    session.refresh(boss)
    assert (boss.role, boss.disabled, boss.display_name) == ("admin", False, "boss")
    assert users.find_user(session=session, username="mallory") is None
    assert users.check_login(
        session=session, username="boss", password="password-boss", now=utcnow()
    ).user
    if actor != "nobody":
        mine = users.get_user(session=session, user_id=actor_id)
        assert mine.role == ("member" if actor == "member" else "admin")


def _race(engine: Engine, *attempts: Callable[[Session], object]) -> list[str]:
    """Run each attempt in its own thread and transaction, started together; the outcomes."""
    barrier = threading.Barrier(len(attempts))
    outcomes: list[str] = []

    def run(attempt: Callable[[Session], object]) -> None:
        barrier.wait()
        try:
            with open_session(engine) as session:
                attempt(session)
            outcomes.append("done")
        except (LastAdministrator, Forbidden) as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=run, args=(a,)) for a in attempts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return sorted(outcomes)


def _two_admins(engine: Engine) -> tuple[int, int]:
    with open_session(engine) as session:
        return _user(session, "ann", "admin").id, _user(session, "ben", "admin").id


def test_two_last_admins_demoting_themselves_at_once_leave_one(engine: Engine) -> None:
    ann, ben = _two_admins(engine)
    outcomes = _race(
        engine,
        lambda s: user_admin.set_role(session=s, actor_id=ann, user_id=ann, role="member"),
        lambda s: user_admin.set_role(session=s, actor_id=ben, user_id=ben, role="member"),
    )
    assert outcomes == ["LastAdministrator", "done"]
    with open_session(engine) as session:
        assert len(_admins(session)) == 1


def test_two_last_admins_demoting_each_other_at_once_leave_one(engine: Engine) -> None:
    ann, ben = _two_admins(engine)
    outcomes = _race(
        engine,
        lambda s: user_admin.set_role(session=s, actor_id=ann, user_id=ben, role="member"),
        lambda s: user_admin.set_role(session=s, actor_id=ben, user_id=ann, role="member"),
    )
    # The second waits for the first's lock, then is a member: refused as one.
    assert outcomes == ["Forbidden", "done"]
    with open_session(engine) as session:
        assert len(_admins(session)) == 1


def test_two_last_admins_disabling_themselves_at_once_leave_one(engine: Engine) -> None:
    ann, ben = _two_admins(engine)
    outcomes = _race(
        engine,
        lambda s: user_admin.set_disabled(session=s, actor_id=ann, user_id=ann, disabled=True),
        lambda s: user_admin.set_disabled(session=s, actor_id=ben, user_id=ben, disabled=True),
    )
    assert outcomes == ["LastAdministrator", "done"]
    with open_session(engine) as session:
        assert len(_admins(session)) == 1
