"""Use cases on one conversation.

`conversation_for` is the one owner-checked lookup: whatever reads a conversation on a
person's behalf (its messages, workspace files, memory views, share links, queue, versions)
gets it through here, so another person's conversation is the same "not found" as one that
never existed (nobody learns that a uuid is in use).
"""

from __future__ import annotations

from agent_chat.db import sessions
from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatSession
from agent_chat.services.backend import Backend


class ConversationNotFound(NotFound):
    """No conversation with this uuid is the acting person's."""

    def __init__(self, session_uuid: str) -> None:
        self.session_uuid = session_uuid
        super().__init__(f"Conversation {session_uuid!r} does not exist.")


async def conversation_for(svc: Backend, *, user_id: int, session_uuid: str) -> ChatSession:
    """`user_id`'s conversation with this uuid; `ConversationNotFound` when there is none,
    when it is another person's, and for an empty or malformed uuid."""
    if not session_uuid:
        raise ConversationNotFound(session_uuid)
    chat = await svc.storage.call(sessions.get_session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        raise ConversationNotFound(session_uuid)
    return chat
