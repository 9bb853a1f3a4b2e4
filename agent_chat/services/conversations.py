"""Use cases on one conversation.

`conversation_for` is the one owner-checked lookup: whatever reads a conversation on a
person's behalf (its messages, workspace files, memory views, share links, queue, versions)
gets it through here, so another person's conversation is the same "not found" as one that
never existed (nobody learns that a uuid is in use).
"""

from __future__ import annotations

import asyncio

from agent_chat.db import sessions
from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatSession
from agent_chat.services.backend import Backend
from agent_chat.services.errors import Busy
from agent_chat.workspaces import remove_workspace, workspaces_root


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


async def refuse_while_running(
    svc: Backend, *, user_id: int, session_uuid: str, action: str
) -> None:
    """`Busy` while a run of the conversation goes on (on any worker): `action` ("Deleting",
    "Switching versions" …) is not possible then."""
    if await svc.runs.running_in(session_uuid, user_id=user_id):
        raise Busy(f"{action} is not possible while the agent is answering: stop it or wait.")


async def delete_conversation(svc: Backend, *, user_id: int, session_uuid: str) -> None:
    """Delete the person's conversation: its messages, logs, pauses and queue (the
    database's cascade), then its workspace folder. `Busy` while it runs."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    await refuse_while_running(
        svc, user_id=user_id, session_uuid=chat.session_uuid, action="Deleting"
    )
    await svc.storage.call(sessions.delete_session, session_uuid=chat.session_uuid, user_id=user_id)
    # The canonical uuid names the folder (a URL may carry it in capitals).
    await asyncio.to_thread(remove_workspace, workspaces_root(), chat.session_uuid)
