"""The signed-in person's own account: who a session cookie belongs to (every page's
event asks), their account row, and saving their display name and password.

`signed_in` is the page's lookup of the handshake cookie, exactly as the login gate does
(`db/auth_sessions.py:session_user`), cached a few seconds per process and keyed by the
token's hash (the gate closes a revoked session's socket within seconds anyway).
"""

from __future__ import annotations

import time
from datetime import timedelta

from agent_chat.db import auth_sessions, users
from agent_chat.db.api_tokens import hash_token
from agent_chat.db.auth_sessions import SignedIn
from agent_chat.db.models import AppUser, utcnow
from agent_chat.services.backend import Backend

SIGNED_IN_CACHE_SECONDS = 5.0
_signed_in_cache: dict[str, tuple[float, SignedIn | None]] = {}


async def signed_in(svc: Backend, *, token: str | None, fresh: bool = False) -> SignedIn | None:
    """The person and session of a session cookie's token; None when it is unknown,
    expired or revoked. `fresh`: not from the cache (before a change that matters)."""
    if not token:
        return None
    key, now = hash_token(token), time.monotonic()
    cached = _signed_in_cache.get(key)
    if cached is not None and cached[0] > now and not fresh:
        return cached[1]
    found = await svc.storage.call(
        auth_sessions.session_user,
        token=token,
        now=utcnow(),
        max_age=timedelta(hours=svc.settings.session_hours),
    )
    if len(_signed_in_cache) > 10_000:
        _signed_in_cache.clear()
    _signed_in_cache[key] = (now + SIGNED_IN_CACHE_SECONDS, found)
    return found


async def my_account(svc: Backend, *, user_id: int) -> AppUser:
    return await svc.storage.call(users.get_user, user_id=user_id)


async def save_account(
    svc: Backend,
    *,
    user_id: int,
    session_id: int,
    display_name: str,
    current_password: str = "",
    new_password: str = "",
) -> AppUser:
    """The display name, and the password when a new one (or the current one) is given:
    every other session of the person ends, `session_id` (this one) stays.
    `ValidationFailed` names the field that is wrong."""
    row = await svc.storage.call(users.set_display_name, user_id=user_id, display_name=display_name)
    if new_password or current_password:
        row = await svc.storage.call(
            users.change_password,
            user_id=user_id,
            current_password=current_password,
            new_password=new_password,
            keep_session_id=session_id,
        )
    return row
