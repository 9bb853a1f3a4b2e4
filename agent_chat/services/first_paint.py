"""What the first HTML of `/chat` and `/chat/<uuid>` shows before the app has its state: the
owner's conversation list as the sidebar first lists it, and the conversation's newest
messages of its active branch, read-only (api/first_paint.py puts them into the page,
share_page/first_paint.py renders them).

Owner-checked like every other read (`open_conversation`): another person's uuid, a
missing one and a malformed one all give None, so the page carries nothing of it. It reads
only those messages (`load_newest`), not the branch's outline that the page's meter needs,
and the list's first screen: the HTML waits for both reads (made at once).
"""

from __future__ import annotations

import asyncio

from agent_chat.db.conversation import load_newest
from agent_chat.db.models import ChatSession
from agent_chat.display.rows import session_row
from agent_chat.services import listing
from agent_chat.services.backend import Backend
from agent_chat.share_page.first_paint import (
    FirstPaint,
    PaintedFolder,
    PaintedMessage,
    PaintedRow,
    PaintedSidebar,
)
from agent_chat.share_page.snapshot import message_kind

# Enough to fill a screen; the app shows the rest once it has taken over.
FIRST_PAINT_MESSAGES = 4
# A message's end, which is what the screen shows of a long one: its Markdown is rendered in
# the request, on the event loop, so a 1 MB answer must not be.
FIRST_PAINT_CHARS = 6000
# The list's rows below its pins and folders: more than a tall screen shows.
FIRST_PAINT_ROWS = 40


async def first_paint(
    svc: Backend, *, user_id: int, session_uuid: str, limit: int = FIRST_PAINT_MESSAGES
) -> FirstPaint | None:
    """`user_id`'s page for `session_uuid` ("" for a new conversation) as its first paint; None
    when the conversation is not theirs (or does not exist), or there is nothing to show that
    the app's own first render does not (no message and no conversation at all)."""
    side = asyncio.ensure_future(_sidebar(svc, user_id=user_id, current=session_uuid))
    try:
        view = None
        if session_uuid:
            view = await svc.storage.call(
                load_newest, session_uuid=session_uuid, user_id=user_id, limit=limit
            )
            if view is None:
                return None
        sidebar = await side
    finally:
        side.cancel()  # the page went out without it (or the read failed): not waited for
    messages = [
        PaintedMessage(
            kind=message_kind(m.role, m.status),
            status=m.status,
            content=(m.content or "")[-FIRST_PAINT_CHARS:],
            cut=len(m.content or "") > FIRST_PAINT_CHARS,
        )
        for m in (view.messages if view else [])
    ]
    if not messages and not (sidebar.pinned or sidebar.folders or sidebar.others):
        return None
    return FirstPaint(
        title=view.chat.title if view else "",
        messages=messages,
        earlier=bool(view and view.has_earlier),
        sidebar=sidebar,
    )


async def _sidebar(svc: Backend, *, user_id: int, current: str) -> PaintedSidebar:
    """The list as the sidebar's first load has it (services/listing.py:sidebar, archived
    conversations hidden, folders at their first page); no badges (the app adds them)."""
    listed = await listing.sidebar(
        svc, user_id=user_id, limit=FIRST_PAINT_ROWS, include_archived=False, folder_limits={}
    )

    def rows(chats: list[ChatSession]) -> list[PaintedRow]:
        return [
            PaintedRow(title=session_row(c)["title"], current=c.session_uuid == current)
            for c in chats
        ]

    return PaintedSidebar(
        pinned=rows(listed.pinned),
        folders=[
            PaintedFolder(f.folder.name, f.count, f.folder.collapsed, rows(f.sessions))
            for f in listed.folders
        ],
        others=rows(listed.unfiled[:FIRST_PAINT_ROWS]),
    )
