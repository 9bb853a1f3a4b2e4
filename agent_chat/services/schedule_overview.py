"""What the schedules page lists (`db/schedules.py:overview`): each of the person's schedules
with its newest firing and the conversation it adds to, read at once."""

from __future__ import annotations

from agent_chat.db import schedules
from agent_chat.db.schedules import Listed
from agent_chat.services.backend import Backend


async def overview(svc: Backend, *, user_id: int) -> list[Listed]:
    """The person's schedules, the next to fire first, paused ones last."""
    return await svc.storage.call(schedules.overview, user_id=user_id)
