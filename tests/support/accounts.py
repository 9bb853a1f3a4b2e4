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
from agent_chat.db import passwords

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
