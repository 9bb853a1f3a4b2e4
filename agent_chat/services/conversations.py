"""Use cases on one conversation.

`conversation_for` is the one owner-checked lookup: whatever reads a conversation on a
person's behalf (its messages, workspace files, memory views, share links, queue, versions)
gets it through here, so another person's conversation is the same "not found" as one that
never existed (nobody learns that a uuid is in use).

Below it, what the sidebar (state/sidebar.py, state/folders.py) and the API's
PATCH /api/chat/sessions/{id} both do: rename, archive, pin, move to a folder, change the
model or skill (`change_conversation`, several at once), and whether a run goes on in it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Literal

from agent_chat.common.checkpoint_store import remove_store
from agent_chat.common.workspaces import remove_workspace, workspaces_root
from agent_chat.db import api_reads, sessions
from agent_chat.db.conversation import Conversation, load_conversation
from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatSession
from agent_chat.services.backend import Backend
from agent_chat.services.errors import Busy
from agent_chat.skills import list_skills


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


async def open_conversation(
    svc: Backend, *, user_id: int, session_uuid: str, limit: int, seen: bool = False
) -> Conversation | None:
    """The active branch's newest `limit` messages (0: all) with their run stats, versions
    and queue; None for a missing conversation or another person's. `seen`: the person
    looks at it now, so it is no longer unread."""
    view = await svc.storage.call(
        load_conversation, session_uuid=session_uuid, user_id=user_id, limit=limit
    )
    if view is not None and seen and view.chat.unread:
        await svc.storage.call(sessions.set_unread, session_id=view.chat.id, unread=False)
    return view


async def create_conversation(
    svc: Backend,
    *,
    user_id: int,
    title: str = "",
    model_id: int | None = None,
    skill_folder: str | None = None,
) -> ChatSession:
    """A new, empty conversation (the API's; the page creates one by its first message).
    `ValidationFailed` for an unknown model or a skill that is not usable."""
    return await svc.storage.call(
        api_reads.create_session,
        user_id=user_id,
        title=title,
        model_id=model_id,
        skill_folder=skill_folder,
        known_skills=usable_skills(svc),
    )


async def refuse_while_running(
    svc: Backend, *, user_id: int, session_uuid: str, action: str
) -> None:
    """`Busy` while a run of the conversation goes on (on any worker): `action` ("Deleting",
    "Switching versions" …) is not possible then."""
    if await svc.runs.running_in(session_uuid, user_id=user_id):
        raise Busy(f"{action} is not possible while the agent is answering: stop it or wait.")


@contextlib.asynccontextmanager
async def while_quiet(
    svc: Backend, *, user_id: int, session_uuid: str, action: str
) -> AsyncIterator[None]:
    """`refuse_while_running`, and no run starts in this process until the block ends (the
    run manager's start lock; a start marks its run going under it): for what changes the
    conversation's folder, which a run starting meanwhile would work in. Several workers:
    a start on another worker is not held back (only its own check in the turn's
    transaction sees a run going, not a switch). Not around `svc.runs` calls that take
    the lock themselves (a reset)."""
    async with svc.runs.start_lock:
        await refuse_while_running(svc, user_id=user_id, session_uuid=session_uuid, action=action)
        yield


async def delete_conversation(svc: Backend, *, user_id: int, session_uuid: str) -> None:
    """Delete the person's conversation: its messages, logs, pauses and queue (the
    database's cascade), then its workspace folder. `Busy` while it runs."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    async with while_quiet(svc, user_id=user_id, session_uuid=chat.session_uuid, action="Deleting"):
        await svc.storage.call(
            sessions.delete_session, session_uuid=chat.session_uuid, user_id=user_id
        )
        # The canonical uuid names the folder (a URL may carry it in capitals).
        await remove_folder(chat.session_uuid)


async def remove_folder(session_uuid: str) -> None:
    """A deleted conversation's workspace folder goes too (files the agent or its attachments
    put there), and its checkpoints (common/checkpoint_store.py)."""
    root = workspaces_root()
    await asyncio.to_thread(remove_workspace, root, session_uuid)
    await asyncio.to_thread(remove_store, root, session_uuid)


# "Not given" for the fields where None is a value (no folder, the default model, no skill).
UNSET = api_reads.UNSET
ConversationState = Literal["running", "waiting", ""]


def usable_skills(svc: Backend) -> list[str]:
    """The skill folders a conversation may name (invalid ones are listed, not usable)."""
    return [s.folder for s in list_skills(svc.settings.skills_dir) if s.valid]


async def change_conversation(
    svc: Backend,
    *,
    user_id: int,
    session_uuid: str,
    title: str | None = None,
    archived: bool | None = None,
    pinned: bool | None = None,
    folder_id: int | None | object = UNSET,
    model_id: int | None | object = UNSET,
    skill_folder: str | None | object = UNSET,
) -> ChatSession:
    """Change any of these at once, all or nothing (one transaction): what the API's PATCH
    does, and what each single change below comes down to. `ValidationFailed` for an empty
    title, an unknown model, an unusable skill, a folder that is not the person's; `Busy`
    for a new model or skill while a run goes on (it has its agent)."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    choices: dict = {}
    if model_id is not UNSET or skill_folder is not UNSET:
        await refuse_while_running(
            svc,
            user_id=user_id,
            session_uuid=chat.session_uuid,
            action="Changing the model or skill",
        )
        # The store checks the kept skill too when only the model changes.
        choices["known_skills"] = usable_skills(svc)
        if model_id is not UNSET:
            choices["model_id"] = model_id
        if skill_folder is not UNSET:
            choices["skill_folder"] = skill_folder
    if folder_id is not UNSET:
        choices["folder_id"] = folder_id
    return await svc.storage.call(
        api_reads.update_session,
        session_uuid=chat.session_uuid,
        user_id=user_id,
        title=title,
        archived=archived,
        pinned=pinned,
        **choices,
    )


async def rename_conversation(
    svc: Backend, *, user_id: int, session_uuid: str, title: str
) -> ChatSession:
    """Its title, on one line and at most 200 characters; an empty one is refused."""
    return await change_conversation(svc, user_id=user_id, session_uuid=session_uuid, title=title)


async def set_archived(
    svc: Backend, *, user_id: int, session_uuid: str, archived: bool
) -> ChatSession:
    """Archive it (out of the sidebar's list unless archived ones are shown) or bring it back."""
    return await change_conversation(
        svc, user_id=user_id, session_uuid=session_uuid, archived=archived
    )


async def set_pinned(svc: Backend, *, user_id: int, session_uuid: str, pinned: bool) -> ChatSession:
    """Pin it to the top of the sidebar (newest pin first) or unpin it."""
    return await change_conversation(svc, user_id=user_id, session_uuid=session_uuid, pinned=pinned)


async def move_conversation(
    svc: Backend, *, user_id: int, session_uuid: str, folder_id: int | None
) -> ChatSession:
    """Into one of the person's folders, or out of any with `folder_id=None`."""
    return await change_conversation(
        svc, user_id=user_id, session_uuid=session_uuid, folder_id=folder_id
    )


async def conversation_state(svc: Backend, *, user_id: int, session_uuid: str) -> ConversationState:
    """Whether a run goes on in it, whichever worker consumes the run: "running", "waiting"
    (for an answer to a question) or "" (none)."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    run = await svc.runs.running_in(chat.session_uuid, user_id=user_id)
    return "" if run is None else "waiting" if run.waiting else "running"
