"""What the first HTML of `/chat/<uuid>` shows before the app has its state: the owner's
newest messages of the conversation's active branch, read-only (api/first_paint.py puts
them into the page, share_page/first_paint.py renders them).

Owner-checked like every other read (`open_conversation`): another person's uuid, a
missing one and a malformed one all give None, so the page carries nothing of it. It reads
only those messages (`load_newest`), not the branch's outline that the page's meter needs:
the HTML waits for this read.
"""

from __future__ import annotations

from agent_chat.db.conversation import load_newest
from agent_chat.services.backend import Backend
from agent_chat.share_page.first_paint import FirstPaint, PaintedMessage
from agent_chat.share_page.snapshot import message_kind

# Enough to fill a screen; the app shows the rest once it has taken over.
FIRST_PAINT_MESSAGES = 4
# A message's end, which is what the screen shows of a long one: its Markdown is rendered in
# the request, on the event loop, so a 1 MB answer must not be.
FIRST_PAINT_CHARS = 6000


async def first_paint(
    svc: Backend, *, user_id: int, session_uuid: str, limit: int = FIRST_PAINT_MESSAGES
) -> FirstPaint | None:
    """`user_id`'s conversation `session_uuid` as its first paint; None when it is not theirs
    (or does not exist) or has no message yet."""
    if not session_uuid:
        return None
    view = await svc.storage.call(
        load_newest, session_uuid=session_uuid, user_id=user_id, limit=limit
    )
    if view is None or not view.messages:
        return None
    messages = [
        PaintedMessage(
            kind=message_kind(m.role, m.status),
            status=m.status,
            content=(m.content or "")[-FIRST_PAINT_CHARS:],
            cut=len(m.content or "") > FIRST_PAINT_CHARS,
        )
        for m in view.messages
    ]
    return FirstPaint(title=view.chat.title or "", messages=messages, earlier=view.has_earlier)
