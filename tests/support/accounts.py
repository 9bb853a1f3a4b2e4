"""Accounts for tests: the administrator every test stack makes at start
(AGENT_CHAT_ADMIN_USER/PASSWORD), signing in over the login API, and cheap password hashes
for tests that hash many times (argon2's defaults take most of a second here)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from agent_chat.auth import COOKIE_NAME
from agent_chat.db import passwords, users

ADMIN_USER = "admin"
ADMIN_PASSWORD = "test-admin-password"
ADMIN_ENV = {"AGENT_CHAT_ADMIN_USER": ADMIN_USER, "AGENT_CHAT_ADMIN_PASSWORD": ADMIN_PASSWORD}

_CHEAP = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1),))
_CHEAP_DUMMY = _CHEAP.hash("dummy")


def use_cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id with the smallest cost in this process (what is stored still says so)."""
    monkeypatch.setattr(passwords, "_hasher", lambda: _CHEAP)
    monkeypatch.setattr(passwords, "_dummy_hash", lambda: _CHEAP_DUMMY)


def session_cookie(
    url: str, username: str = ADMIN_USER, password: str = ADMIN_PASSWORD, **kwargs: Any
) -> str:
    """Sign in over `POST /api/login`; the session cookie's value."""
    response = httpx.post(
        f"{url}/api/login", json={"username": username, "password": password}, timeout=60, **kwargs
    )
    assert response.status_code == 200, response.text
    return response.cookies[COOKIE_NAME]


def user_id_of(db_url: str, username: str = ADMIN_USER) -> int:
    """The id of the account `username` (the stack's administrator by default)."""
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(db_url)
    try:
        with open_session(engine) as session:
            user = users.find_user(session=session, username=username)
            assert user is not None and user.id is not None, f"no account {username!r}"
            return user.id
    finally:
        engine.dispose()


def ensure_member(db_url: str, username: str, password: str) -> int:
    """A member account (made unless it exists: stacks keep accounts between files); its id."""
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(db_url)
    try:
        with open_session(engine) as session:
            user = users.find_user(session=session, username=username)
            if user is None:
                user = users.create_user(
                    session=session,
                    username=username,
                    password_hash=passwords.hash_password(password),
                    display_name=username.title(),
                )
            assert user.id is not None
            return user.id
    finally:
        engine.dispose()
