"""`GET /api/chat/sessions/{session_uuid}/workspace/{path}`: one file of a conversation's
workspace, as a download.

Mounted into the app's HTTP API (`create_api`), so it sits behind the login gate and the
Host/Origin guard like every `/api/*` route. Anything that is not a regular file inside the
conversation's own folder answers 404, the same for every reason (no oracle): `..`, an
absolute path, a symlink that leads out (to another conversation or anywhere else), a
folder, a pipe, a conversation that does not exist. `?inline=1` shows a raster image in the
page (the drawer's preview); everything else is always an attachment, and no file is ever
served as a page of this origin (a sandboxing Content-Security-Policy, no sniffing).
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import StreamingResponse

from agent_chat.api.acting_user import Me
from agent_chat.common.workspaces import IMAGE_TYPES, open_inside, workspaces_root
from agent_chat.routes import WORKSPACE_FILE_API
from agent_chat.services.backend import Backend
from agent_chat.services.conversations import ConversationNotFound, conversation_for

CHUNK = 64 * 1024
# A file is data, never a page of this origin: no script, no plugin, no form, no frame.
FILE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"


def _disposition(kind: str, name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    ascii_name = "".join(c if c.isprintable() and c not in '"\\;' else "_" for c in ascii_name)
    header = f'{kind}; filename="{ascii_name or "file"}"'
    if ascii_name != name:
        header += f"; filename*=UTF-8''{quote(name, safe='')}"
    return header


def _media_type(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in IMAGE_TYPES:
        return IMAGE_TYPES[suffix]
    guessed, encoding = mimetypes.guess_type(path)
    if encoding or not guessed:
        return "application/octet-stream"  # e.g. .tar.gz: the bytes as they are
    if guessed.startswith("text/") or guessed in ("application/json", "application/xml"):
        return f"{guessed}; charset=utf-8"
    return guessed


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK):
            yield chunk


def workspace_router(
    get_backend: Callable[[], Backend], get_root: Callable[[], Path] = workspaces_root
) -> APIRouter:
    """The route; `get_backend` and `get_root` are called per request (the app's services
    exist once they started; tests give their own root)."""
    router = APIRouter(tags=["workspace"])
    not_found = HTTPException(status_code=404, detail="No such file in this conversation.")

    @router.get(
        WORKSPACE_FILE_API,
        summary="Download a file of the conversation's workspace",
        responses={404: {"description": "No such file in this conversation's workspace"}},
    )
    async def workspace_file(
        me: Me, session_uuid: str, path: str, inline: bool = Query(False)
    ) -> StreamingResponse:
        try:
            await conversation_for(get_backend(), user_id=me, session_uuid=session_uuid)
        except ConversationNotFound:
            raise not_found from None
        try:
            fd, info = await asyncio.to_thread(open_inside, get_root(), session_uuid, path)
        except FileNotFoundError:
            raise not_found from None
        handle = os.fdopen(fd, "rb")
        name = PurePosixPath(path).name
        shown_inline = inline and PurePosixPath(path).suffix.lower() in IMAGE_TYPES
        return StreamingResponse(
            _chunks(handle),
            media_type=_media_type(path),
            headers={
                "Content-Length": str(info.st_size),
                "Content-Disposition": _disposition(
                    "inline" if shown_inline else "attachment", name
                ),
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": FILE_CSP,
            },
        )

    return router
