"""Use cases on personal API tokens (`Authorization: Bearer`, the CLI): make one, list the
person's, revoke one. Each person sees and revokes only their own: another's token is the
same `NotFound` as none. Checking a token on a request is the login gate's
(api/bearer.py → `db/api_tokens.verify_token`), not a use case.

The page (state/tokens.py) calls these; the HTTP API has no token routes (a token is made
in the browser, where the person signed in).
"""

from __future__ import annotations

from agent_chat.db import api_tokens
from agent_chat.db.api_tokens import NewToken
from agent_chat.db.models import ApiToken
from agent_chat.runs.storage import Storage
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id


async def token_user(storage: Storage, *, token: str) -> int | None:
    """The id of the person a bearer token acts for (its owner); None for an unknown,
    revoked or expired token. Takes the storage: the API's gate asks before a request
    reaches the app's services."""
    return await storage.call(api_tokens.verify_token, token=token)


async def create_token(svc: Backend, *, user_id: int, name: str) -> NewToken:
    """A new token acting for the person; the token itself is in the result, once (only its
    hash is stored). `ValidationFailed` on `name` for an empty one; a long one is cut to
    `api_tokens.NAME_MAX_CHARS`."""
    return await svc.storage.call(api_tokens.create_token, user_id=user_id, name=name)


async def list_tokens(svc: Backend, *, user_id: int) -> list[ApiToken]:
    """The person's tokens not revoked, newest first."""
    return await svc.storage.call(api_tokens.list_tokens, user_id=user_id)


async def revoke_token(svc: Backend, *, user_id: int, token_id: int) -> ApiToken:
    """Revoke the token (again: nothing changes): it is refused from the next request on."""
    token_id = row_id(token_id, "API token")
    return await svc.storage.call(api_tokens.revoke_token, user_id=user_id, token_id=token_id)
