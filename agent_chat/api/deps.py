"""What the endpoints reach: the app's storage, RunManager and settings (`services()`),
looked up per request because the services start after the API is built."""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, HTTPException, Request

from agent_chat.auth.gate import SCOPE_USER_KEY
from agent_chat.config import Settings
from agent_chat.db import users
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage


class Backend(Protocol):
    storage: Storage
    runs: RunManager
    settings: Settings


def backend(request: Request) -> Backend:
    return request.app.state.get_backend()


Svc = Annotated[Backend, Depends(backend)]


async def acting_user(request: Request) -> int:
    """The id of the person acting: the signed-in user the login gate put in the scope. A
    personal API token is not tied to a person yet: it acts as the first administrator."""
    user = request.scope.get(SCOPE_USER_KEY)
    if user is not None:
        return int(user.user_id)
    admin = await backend(request).storage.call(users.first_admin_id)
    if admin is None:
        raise HTTPException(401, "Sign in first: there is no account yet.")
    return admin


# Whose hermes memory a run started here works with (the command's `user_id`).
ActingUser = Annotated[int, Depends(acting_user)]
