"""`GET /api/chat/sessions/{session_id}/export?format=md|json&branch=active|all`: the
conversation as a file download."""

from __future__ import annotations

import logging
from urllib.parse import quote

from fastapi import APIRouter, Query
from fastapi.responses import Response

from agent_chat import export, routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import ApiError, responses
from agent_chat.db.errors import NotFound
from agent_chat.db.models import utcnow

log = logging.getLogger(__name__)
router = APIRouter(tags=["sessions"])


def _check(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ApiError(
            422,
            f"{name} must be one of: {', '.join(allowed)} (got {value!r})",
            fields={name: f"one of {', '.join(allowed)}"},
        )
    return value


def content_disposition(filename: str, ascii_filename: str) -> str:
    """`attachment` with an ASCII name, plus the UTF-8 name (RFC 6266) when they differ."""
    header = f'attachment; filename="{ascii_filename}"'
    if filename != ascii_filename:
        header += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return header


@router.get(
    routes.EXPORT_API,
    response_class=Response,
    responses={
        200: {
            "content": {"text/markdown": {}, "application/json": {}},
            "description": "The file.",
        },
        **responses(404),
    },
)
async def export_session(
    svc: Svc,
    me: Me,
    session_id: str,
    fmt: str = Query(
        "md", alias="format", description="md or json", json_schema_extra={"enum": export.FORMATS}
    ),
    branch: str = Query(
        "active",
        description="active or all (every version)",
        json_schema_extra={"enum": export.BRANCHES},
    ),
) -> Response:
    """The conversation as a file download (Markdown or JSON)."""
    _check("format", fmt, export.FORMATS)
    _check("branch", branch, export.BRANCHES)
    try:
        data = await svc.storage.call(
            export.collect, session_uuid=session_id, user_id=me, branch=branch
        )
    except NotFound as exc:
        raise ApiError(404, str(exc)) from exc
    exported_at = utcnow()
    if fmt == "md":
        body = export.to_markdown(data, exported_at=exported_at)
    else:
        body = export.to_json_text(data, exported_at=exported_at)
    filename = export.export_filename(data.chat, fmt, exported_at)
    ascii_name = export.export_filename(data.chat, fmt, exported_at, ascii_only=True)
    log.info("Exported session %s as %s (branch %s)", session_id, fmt, branch)
    return Response(
        content=body,
        media_type=export.MEDIA_TYPES[fmt],
        headers={
            "Content-Disposition": content_disposition(filename, ascii_name),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )
