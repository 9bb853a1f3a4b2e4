"""The memory drawer's views of a conversation (what the agent works with now, recent tool
calls, summaries, sizes), read for the person whose conversation it is."""

from __future__ import annotations

from agent_chat.db.memory_views import (
    CHARS_PER_TOKEN,
    MemorySnapshot,
    SummaryRecord,
    ToolCallRecord,
    memory_snapshot,
)
from agent_chat.services.backend import Backend

__all__ = [
    "CHARS_PER_TOKEN",
    "MemorySnapshot",
    "SummaryRecord",
    "ToolCallRecord",
    "conversation_memory",
]


async def conversation_memory(
    svc: Backend, *, user_id: int, session_uuid: str
) -> MemorySnapshot | None:
    """None when the conversation is missing or another person's."""
    return await svc.storage.call(memory_snapshot, session_uuid=session_uuid, user_id=user_id)
