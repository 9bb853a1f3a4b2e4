"""People who own rows, for store and manager tests: `make_user` adds one straight in the
store (no password hashing: the hash is a placeholder nobody signs in with). The `user`
fixture (tests/conftest.py) is `default_owner`, administrator "alice", whom builders that
get no user id make their rows for; `other_user` is "bob", who must see none of them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from agent_chat.auth import SCOPE_TOKEN_USER_KEY
from agent_chat.db import users
from agent_chat.db.engine import open_session
from agent_chat.db.models import UserRole

NO_PASSWORD = "!not-a-password-hash"


def make_user(session: Session, username: str = "alice", *, admin: bool = False) -> int:
    """A new user's id."""
    row = users.create_user(
        session=session,
        username=username,
        password_hash=NO_PASSWORD,
        role=UserRole.ADMIN if admin else UserRole.MEMBER,
    )
    assert row.id is not None
    return row.id


DEFAULT_OWNER = "alice"


def default_owner(*, session: Session) -> int:
    """The id of "alice" (made the first time): the owner of the test's conversations."""
    found = users.find_user(session=session, username=DEFAULT_OWNER)
    return found.id if found is not None and found.id else make_user(session, admin=True)


def user_on(engine: Engine, username: str, *, admin: bool = False) -> int:
    """`make_user` in its own committed transaction."""
    with open_session(engine) as session:
        return make_user(session, username, admin=admin)


def acting_as(app: Any, user_id: int) -> Any:
    """`app` (an ASGI app: the API without the login gate) with every request acting for
    `user_id`, as the gate marks a request whose API token is that user's."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, SCOPE_TOKEN_USER_KEY: user_id}
        await app(scope, receive, send)

    return wrapped


def user_named(*, session: Session, username: str) -> int:
    """The id of an existing user (e.g. a test stack's administrator, accounts.ADMIN_USER)."""
    found = users.find_user(session=session, username=username)
    assert found is not None and found.id is not None, f"no user {username!r}"
    return found.id
