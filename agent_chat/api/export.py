"""`GET /api/chat/sessions/{session_id}/export?format=md|json&branch=active|all&files=true`:
the conversation as a file download. A JSON export names each user message's files;
`files=true` also puts their bytes in it (base64, read through the store by the
owner-checked download, within `export.FILES_LIMIT_BYTES`; what did not fit is listed)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from urllib.parse import quote

from fastapi import APIRouter, Query
from fastapi.responses import Response

from agent_chat import export, routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import ApiError, responses
from agent_chat.common.workspaces import workspaces_root
from agent_chat.db.attachment_models import Attachment
from agent_chat.db.errors import NotFound
from agent_chat.db.models import utcnow
from agent_chat.export.checkpoint_data import workspace_of
from agent_chat.services import attachments

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
    files: bool = Query(
        False,
        description=(
            "JSON only: also each file's bytes (base64), up to "
            f"{export.FILES_LIMIT_BYTES // (1024 * 1024)} MiB in all; the export lists the "
            "files left out"
        ),
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

        async def open_bytes(row: Attachment) -> AsyncIterator[bytes]:
            _, chunks = await attachments.open_download(svc, user_id=me, attachment_id=row.id)
            return chunks

        with_files = await export.gather_files(data, open_bytes) if files else None
        workspace = None
        if with_files is not None:  # the workspace's checkpoints, in what the files left
            workspace = await asyncio.to_thread(workspace_of, workspaces_root(), data, with_files)
        body = export.to_json_text(
            data, exported_at=exported_at, files=with_files, workspace=workspace
        )
    filename = export.export_filename(data.chat, fmt, exported_at)
    ascii_name = export.export_filename(data.chat, fmt, exported_at, ascii_only=True)
    log.info(
        "Exported session %s as %s (branch %s%s)",
        session_id,
        fmt,
        branch,
        ", with files" if files and fmt == "json" else "",
    )
    return Response(
        content=body,
        media_type=export.MEDIA_TYPES[fmt],
        headers={
            "Content-Disposition": content_disposition(filename, ascii_name),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )
