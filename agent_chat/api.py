"""The app's HTTP API next to the Reflex pages (mounted through `rx.App(api_transformer=...)`).

Only the conversation export so far (DESIGN.md §6):
`GET /api/chat/sessions/{session_uuid}/export?format=md|json&branch=active|all`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import Response

from agent_chat import export, routes
from agent_chat.db.errors import NotFound
from agent_chat.db.models import utcnow
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


def _check(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise HTTPException(
            status_code=422,
            detail=f"{name} must be one of: {', '.join(allowed)} (got {value!r})",
        )
    return value


def content_disposition(filename: str, ascii_filename: str) -> str:
    """`attachment` with an ASCII name, plus the UTF-8 name (RFC 6266) when they differ."""
    header = f'attachment; filename="{ascii_filename}"'
    if filename != ascii_filename:
        header += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return header


def create_api(get_storage: Callable[[], Storage]) -> FastAPI:
    """The API app; `get_storage` is called per request (the app's storage starts later)."""
    api = FastAPI(title="Agent Chat API", docs_url=None, redoc_url=None, openapi_url=None)

    @api.get(routes.EXPORT_API)
    async def export_session(
        session_uuid: str,
        fmt: str = Query("md", alias="format"),
        branch: str = Query("active"),
    ) -> Response:
        """The conversation as a file download (Markdown or JSON)."""
        _check("format", fmt, export.FORMATS)
        _check("branch", branch, export.BRANCHES)
        try:
            data = await get_storage().call(
                export.collect, session_uuid=session_uuid, branch=branch
            )
        except NotFound as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        exported_at = utcnow()
        if fmt == "md":
            body = export.to_markdown(data, exported_at=exported_at)
        else:
            body = export.to_json_text(data, exported_at=exported_at)
        filename = export.export_filename(data.chat, fmt, exported_at)
        ascii_name = export.export_filename(data.chat, fmt, exported_at, ascii_only=True)
        log.info("Exported session %s as %s (branch %s)", session_uuid, fmt, branch)
        return Response(
            content=body,
            media_type=export.MEDIA_TYPES[fmt],
            headers={
                "Content-Disposition": content_disposition(filename, ascii_name),
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
            },
        )

    return api
