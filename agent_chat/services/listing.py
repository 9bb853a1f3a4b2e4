"""Reading a person's conversations as lists: the sidebar (pins, folders, the others), the
API's pages, search and opening a hit, and each conversation's state (running, waiting).

The sidebar (state/sidebar.py, state/search.py) and the API (api/sessions.py,
api/search.py) list through here, so a conversation's state is worked out once: a run
going on (on any worker: `RunManager.session_states`), else an unanswered question or
approval stored for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_chat.db import api_reads, folders, pauses, sessions
from agent_chat.db.folders import SidebarListing
from agent_chat.db.models import ChatSession
from agent_chat.db.search import OpenedHit, SearchHit, open_hit, search
from agent_chat.services.backend import Backend

# An open folder shows its newest FOLDER_PAGE at first; "Show more" adds FOLDER_MORE.
FOLDER_PAGE, FOLDER_MORE = folders.FOLDER_PAGE, folders.FOLDER_MORE


@dataclass(frozen=True)
class ConversationStates:
    """Which of a person's conversations have a run going on or wait for them."""

    runs: Mapping[str, str]  # session_uuid -> "running" | "waiting", runs going on
    open_pauses: Mapping[int, int]  # chat_session.id -> unanswered questions and approvals

    def waiting(self, chat: ChatSession) -> bool:
        return bool(self.open_pauses.get(chat.id or 0))

    def of(self, chat: ChatSession) -> str:
        """ "running", "waiting" or "" for one conversation."""
        return self.runs.get(chat.session_uuid, "") or ("waiting" if self.waiting(chat) else "")


async def conversation_states(svc: Backend, *, user_id: int) -> ConversationStates:
    waiting = await svc.storage.call(pauses.open_pauses_by_session, user_id=user_id)
    return ConversationStates(await svc.runs.session_states(user_id=user_id), waiting)


async def sidebar(
    svc: Backend,
    *,
    user_id: int,
    limit: int,
    include_archived: bool,
    folder_limits: Mapping[int, int],
) -> SidebarListing:
    """Pins, folders (open ones with their first `folder_limits` conversations) and the
    first `limit` others (more when there are more)."""
    return await svc.storage.call(
        folders.sidebar_listing,
        user_id=user_id,
        limit=limit,
        include_archived=include_archived,
        folder_limits=folder_limits,
    )


async def list_conversations(
    svc: Backend,
    *,
    user_id: int,
    limit: int,
    offset: int = 0,
    include_archived: bool = False,
    search: str | None = None,
    section: str | None = None,
) -> list[ChatSession]:
    """Most recently used first; `section`: "pinned", "filed", "unfiled" or None (all)."""
    return await svc.storage.call(
        sessions.list_sessions,
        user_id=user_id,
        limit=limit,
        offset=offset,
        include_archived=include_archived,
        search=search,
        section=section,
    )


async def latest_conversation(svc: Backend, *, user_id: int) -> ChatSession | None:
    """The person's most recently used conversation (pinned or filed ones included)."""
    found = await list_conversations(svc, user_id=user_id, limit=1)
    return found[0] if found else None


async def previews(svc: Backend, *, user_id: int, chats: Sequence[ChatSession]) -> dict[int, str]:
    """chat_session.id -> the start of its last message, for the person's conversations."""
    ids = [c.id for c in chats if c.id is not None]
    return await svc.storage.call(api_reads.previews, user_id=user_id, session_ids=ids)


async def search_conversations(
    svc: Backend, *, user_id: int, query: str, limit: int = 30
) -> list[SearchHit]:
    """The person's conversations matching `query`, newest match first."""
    return await svc.storage.call(search, user_id=user_id, query=query, limit=limit)


async def open_search_hit(
    svc: Backend, *, user_id: int, message_id: int, switch: bool
) -> OpenedHit:
    """Make the hit's branch the active one (unless `switch` is False: a run works there)
    and say where the message is on the branch shown; `NotFound` for another's message."""
    return await svc.storage.call(open_hit, user_id=user_id, message_id=message_id, switch=switch)
