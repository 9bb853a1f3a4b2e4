"""The login gate's check of `Authorization: Bearer <token>` against the stored tokens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_chat.db import api_tokens
from agent_chat.runs.storage import Storage


def bearer_check(get_storage: Callable[[], Storage]) -> Callable[[str], Awaitable[int | None]]:
    """The check returns the id of the user the token acts for (its owner), or None."""

    async def check(token: str) -> int | None:
        try:
            storage = get_storage()
        except RuntimeError:  # the services are not started yet: nothing can be checked
            return None
        return await storage.call(api_tokens.verify_token, token=token)

    return check
