"""The login gate's check of `Authorization: Bearer <token>` against the stored tokens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_chat.db import api_tokens
from agent_chat.runs.storage import Storage


def bearer_check(get_storage: Callable[[], Storage]) -> Callable[[str], Awaitable[bool]]:
    async def check(token: str) -> bool:
        try:
            storage = get_storage()
        except RuntimeError:  # the services are not started yet: nothing can be checked
            return False
        return await storage.call(api_tokens.verify_token, token=token)

    return check
