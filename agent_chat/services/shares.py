"""Use cases on read-only share links: make one to a conversation (a snapshot of its active
branch now), list the person's links (of one conversation or all), revoke one, and open
one by its token (the public page, no account).

The page (state/share.py) and `GET /s/{token}` (api/shared.py) call these. A link's snapshot
keeps its pictures' thumbnails (made here, before the snapshot's transaction), served to
the link's readers by `share_picture`. Making, listing
and revoking are the conversation owner's: another person's conversation or link is the same
`NotFound` as none. The work is in `share_page/links.py` (snapshot and row, one transaction)
and `db/shares.py`.
"""

from __future__ import annotations

from agent_chat.db import shares
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import ShareLink
from agent_chat.db.shares import NewShare, ShareInfo
from agent_chat.services.attachment_thumbs import NoThumbnail, thumbnail_of
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id
from agent_chat.share_page.links import EXPIRY_CHOICES, branch_pictures, create_share
from agent_chat.share_page.snapshot import picture_bytes


async def create_share_link(
    svc: Backend, *, user_id: int, session_uuid: str, expiry: str = "never"
) -> NewShare:
    """A new link to the conversation as it is now; its token is in the result, once (only
    its hash is stored). `ValidationFailed` for an expiry not offered
    (`share_page.links.EXPIRY_CHOICES`, field `expiry`) or a conversation with no message
    yet (field `session`)."""
    if expiry not in EXPIRY_CHOICES:  # before any thumbnail is made
        raise ValidationFailed({"expiry": f"one of {', '.join(EXPIRY_CHOICES)}"})
    pictures = await svc.storage.call(branch_pictures, session_uuid=session_uuid, user_id=user_id)
    thumbnails: dict[int, bytes] = {}
    for row in pictures:
        if row.id is None or row.id in thumbnails:
            continue
        try:
            thumbnails[row.id] = await thumbnail_of(svc, row)
        except NoThumbnail:
            continue  # not readable as a picture: the page names it, as any file
    return await svc.storage.call(
        create_share,
        session_uuid=session_uuid,
        user_id=user_id,
        expiry=expiry,
        thumbnails=thumbnails,
    )


async def list_share_links(
    svc: Backend, *, user_id: int, session_uuid: str | None = None
) -> list[ShareInfo]:
    """The person's links not revoked (expired ones too), newest first; of one conversation
    when `session_uuid` is given (another person's conversation has none)."""
    return await svc.storage.call(shares.list_shares, user_id=user_id, session_uuid=session_uuid)


async def revoke_share_link(svc: Backend, *, user_id: int, share_id: int) -> ShareLink:
    """Revoke the link (revoking it again changes nothing): it opens nothing from now on."""
    share_id = row_id(share_id, "Share link")
    return await svc.storage.call(shares.revoke_share, user_id=user_id, share_id=share_id)


async def share_picture(svc: Backend, *, token: str, index: int) -> bytes | None:
    """The thumbnail (WebP) of the `index`-th picture a link's page shows, for anyone with
    the link; None when the link opens nothing or has no such picture."""
    row = await open_share_link(svc, token=token)
    return None if row is None else picture_bytes(row.snapshot_json, index)


async def open_share_link(svc: Backend, *, token: str) -> ShareLink | None:
    """The link `token` opens, for anyone who has it; None for one that is unknown, revoked
    or expired (the page answers them alike)."""
    return await svc.storage.call(shares.open_share, token=token)
