"""What the endpoints reach: the app's storage, RunManager and settings (`services()`),
looked up per request because the services start after the API is built."""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, HTTPException, Request

from agent_chat.auth import SCOPE_TOKEN_USER_KEY, SCOPE_USER_KEY
from agent_chat.config import Settings
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage


class Backend(Protocol):
    storage: Storage
    runs: RunManager
    settings: Settings


def backend(request: Request) -> Backend:
    return request.app.state.get_backend()


Svc = Annotated[Backend, Depends(backend)]


def acting_user(request: Request) -> int:
    """Who the request acts for: the signed-in user (a cookie session, put in the scope by
    the login gate) or the owner of its API token. Every endpoint reads and changes only
    that user's data."""
    signed_in = request.scope.get(SCOPE_USER_KEY)
    if signed_in is not None:
        return int(signed_in.user_id)
    token_user = request.scope.get(SCOPE_TOKEN_USER_KEY)
    if token_user:
        return int(token_user)
    # Only reachable without the gate in front (it refuses such requests first).
    raise HTTPException(status_code=401, detail="Sign in or send an API token.")


Me = Annotated[int, Depends(acting_user)]
