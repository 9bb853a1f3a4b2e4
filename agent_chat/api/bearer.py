"""The login gate's check of `Authorization: Bearer <token>` against the stored tokens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_chat.runs.storage import Storage
from agent_chat.services.tokens import token_user


def bearer_check(get_storage: Callable[[], Storage]) -> Callable[[str], Awaitable[int | None]]:
    """The check returns the id of the user the token acts for (its owner), or None."""

    async def check(token: str) -> int | None:
        try:
            storage = get_storage()
        except RuntimeError:  # the services are not started yet: nothing can be checked
            return None
        return await token_user(storage, token=token)

    return check
