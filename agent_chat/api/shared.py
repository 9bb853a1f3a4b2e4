"""`GET /s/{token}`: the read-only page of a share link, for anyone with the link.

Outside `/api` and let through by the login gate without a session (exactly this path and
its pictures', see `auth/paths.py:is_share_path`): it reads one `share_link` row and its frozen snapshot,
nothing of the owner's state, and answers 404 for a link that is unknown, revoked or expired.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from agent_chat.api.deps import Svc
from agent_chat.services.shares import open_share_link, share_picture
from agent_chat.share_page.links import PICTURES, SHARE_PREFIX
from agent_chat.share_page.render import HEADERS, PICTURE_HEADERS, missing_html, share_html

router = APIRouter(include_in_schema=False)


@router.api_route(SHARE_PREFIX + "{token}", methods=["GET", "HEAD"])
async def shared_page(svc: Svc, token: str) -> HTMLResponse:
    row = await open_share_link(svc, token=token)
    if row is None:
        return HTMLResponse(missing_html(), status_code=404, headers=HEADERS)
    return HTMLResponse(share_html(row.snapshot_json, token=token), headers=HEADERS)


@router.api_route(SHARE_PREFIX + "{token}" + PICTURES + "{index}", methods=["GET", "HEAD"])
async def shared_picture(svc: Svc, token: str, index: int) -> Response:
    """A picture's thumbnail on the link's page (the gate lets exactly `/pictures/<digits>`
    after a token through)."""
    found = await share_picture(svc, token=token, index=index)
    if found is None:
        return Response(status_code=404, headers=PICTURE_HEADERS)
    return Response(found, media_type="image/webp", headers=PICTURE_HEADERS)
