"""An administrator's use cases on accounts (services/users.py): list, create, change role,
disable and enable, reset a password, rename. For each: an active administrator succeeds; a
member (and a disabled administrator) gets `Forbidden` before anything is read, and nothing
changes; bad input is `ValidationFailed` naming the field; an account nobody has (or an id
that is not one) is `NotFound`; the last active administrator is kept."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import Engine
from sqlmodel import col, select

from agent_chat.db import passwords, users
from agent_chat.db.engine import open_session
from agent_chat.db.errors import Forbidden, LastAdministrator, NotFound, ValidationFailed
from agent_chat.db.models import AppUser
from agent_chat.runs.storage import Storage
from agent_chat.services import users as accounts
from tests.support.accounts import use_cheap_hashes
from tests.support.users import user_on

NOT_IDS = (10**9, "1", None, True)
PASSWORD = "a-long-enough-password"


@pytest.fixture(autouse=True)
def _cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    use_cheap_hashes(monkeypatch)


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return SimpleNamespace(storage=storage)


def _accounts(engine: Engine) -> list[tuple]:
    with open_session(engine) as session:
        rows = session.exec(select(AppUser).order_by(col(AppUser.id))).all()
        return [(u.username, u.display_name, u.role, u.disabled, u.password_hash) for u in rows]


def _disabled_admin(engine: Engine) -> int:
    carol = user_on(engine, "carol", admin=True)
    with open_session(engine) as session:
        users.set_disabled(session=session, user_id=carol, disabled=True)
    return carol


async def _refused_to_all_but_admins(svc, engine: Engine, member: int, use_case, **kwargs):
    """`use_case` by a member, a disabled administrator and nobody is `Forbidden` and
    changes nothing."""
    before = _accounts(engine)
    for who in (member, _disabled_admin(engine), None, 10**9):
        with pytest.raises(Forbidden, match="Only an administrator"):
            await use_case(svc, user_id=who, **kwargs)
    assert _accounts(engine)[: len(before)] == before


async def test_list_users(svc, engine: Engine, user: int, other_user: int) -> None:
    listed = await accounts.list_users(svc, user_id=user)
    assert [u.username for u in listed] == ["alice", "bob"]
    await _refused_to_all_but_admins(svc, engine, other_user, accounts.list_users)


async def test_create_user(svc, engine: Engine, user: int, other_user: int) -> None:
    made = await accounts.create_user(
        svc, user_id=user, username="Dora", password=PASSWORD, display_name="Dora D.", role="admin"
    )
    assert (made.username, made.display_name, made.role) == ("dora", "Dora D.", "admin")
    assert passwords.verify(PASSWORD, made.password_hash)[0]
    await _refused_to_all_but_admins(
        svc, engine, other_user, accounts.create_user, username="eve", password=PASSWORD
    )
    before = _accounts(engine)
    for field, kwargs in (
        ("username", {"username": "no spaces", "password": PASSWORD}),
        ("username", {"username": "BOB", "password": PASSWORD}),  # taken
        ("password", {"username": "eve", "password": "short"}),
        ("role", {"username": "eve", "password": PASSWORD, "role": "owner"}),
    ):
        with pytest.raises(ValidationFailed) as refused:
            await accounts.create_user(svc, user_id=user, **kwargs)
        assert field in refused.value.field_errors
    assert _accounts(engine) == before


async def test_set_role(svc, engine: Engine, user: int, other_user: int) -> None:
    promoted = await accounts.set_role(svc, user_id=user, target_id=other_user, role="admin")
    assert promoted.role == "admin"
    await accounts.set_role(svc, user_id=user, target_id=other_user, role="member")
    await _refused_to_all_but_admins(
        svc, engine, other_user, accounts.set_role, target_id=user, role="member"
    )
    with pytest.raises(ValidationFailed) as refused:
        await accounts.set_role(svc, user_id=user, target_id=other_user, role="owner")
    assert "role" in refused.value.field_errors
    for target in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await accounts.set_role(svc, user_id=user, target_id=target, role="admin")
    before = _accounts(engine)
    with pytest.raises(LastAdministrator, match="last active administrator"):
        await accounts.set_role(svc, user_id=user, target_id=user, role="member")
    assert _accounts(engine) == before


async def test_disable_and_enable(svc, engine: Engine, user: int, other_user: int) -> None:
    off = await accounts.set_disabled(svc, user_id=user, target_id=other_user, disabled=True)
    assert off.disabled
    on = await accounts.set_disabled(svc, user_id=user, target_id=other_user, disabled=False)
    assert not on.disabled
    await _refused_to_all_but_admins(
        svc, engine, other_user, accounts.set_disabled, target_id=user, disabled=True
    )
    before = _accounts(engine)
    with pytest.raises(ValidationFailed) as refused:
        await accounts.set_disabled(svc, user_id=user, target_id=other_user, disabled="yes")
    assert "disabled" in refused.value.field_errors
    for target in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await accounts.set_disabled(svc, user_id=user, target_id=target, disabled=True)
    with pytest.raises(LastAdministrator):
        await accounts.set_disabled(svc, user_id=user, target_id=user, disabled=True)
    assert _accounts(engine) == before


async def test_reset_password(svc, engine: Engine, user: int, other_user: int) -> None:
    new = "another-long-password"
    reset = await accounts.reset_password(svc, user_id=user, target_id=other_user, new_password=new)
    assert passwords.verify(new, reset.password_hash)[0]
    await _refused_to_all_but_admins(
        svc, engine, other_user, accounts.reset_password, target_id=user, new_password=new
    )
    before = _accounts(engine)
    with pytest.raises(ValidationFailed) as refused:
        await accounts.reset_password(svc, user_id=user, target_id=other_user, new_password="x")
    assert "password" in refused.value.field_errors
    for target in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await accounts.reset_password(svc, user_id=user, target_id=target, new_password=new)
    assert _accounts(engine) == before


async def test_rename_user(svc, engine: Engine, user: int, other_user: int) -> None:
    renamed = await accounts.rename_user(
        svc, user_id=user, target_id=other_user, display_name=" Bob  B. "
    )
    assert (renamed.username, renamed.display_name) == ("bob", "Bob B.")
    await _refused_to_all_but_admins(
        svc, engine, other_user, accounts.rename_user, target_id=user, display_name="Mallory"
    )
    before = _accounts(engine)
    with pytest.raises(ValidationFailed) as refused:
        await accounts.rename_user(svc, user_id=user, target_id=other_user, display_name="  ")
    assert "display_name" in refused.value.field_errors
    for target in NOT_IDS:
        with pytest.raises(NotFound, match="does not exist"):
            await accounts.rename_user(svc, user_id=user, target_id=target, display_name="X")
    assert _accounts(engine) == before
