"""Who an HTTP request acts for (the API's and the workspace files' dependency `Me`): the
signed-in user (a cookie session, put in the ASGI scope by the login gate) or the owner of
the request's API token (marked in the scope by the gate's bearer check). Every endpoint
reads and changes only that user's data."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from agent_chat.auth import SCOPE_TOKEN_USER_KEY, SCOPE_USER_KEY


def acting_user(request: Request) -> int:
    signed_in = request.scope.get(SCOPE_USER_KEY)
    if signed_in is not None:
        return int(signed_in.user_id)
    token_user = request.scope.get(SCOPE_TOKEN_USER_KEY)
    if token_user:
        return int(token_user)
    # Only reachable without the gate in front (it refuses such requests first).
    raise HTTPException(status_code=401, detail="Sign in or send an API token.")


Me = Annotated[int, Depends(acting_user)]
