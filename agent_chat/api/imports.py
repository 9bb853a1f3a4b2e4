"""`POST /api/chat/sessions/import`: a JSON export of this app becomes a new conversation
(the same store function as the sidebar's "Import conversation", `db/imports.py`).

The file is the request body (`Content-Type: application/json`) or the `file` part of a
multipart form. Refusals are 400 (not JSON), 413 (over the limit), 422 (another format, a
wrong version, a broken tree); nothing is created then.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from pydantic import Field
from starlette.datastructures import UploadFile

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import ApiError, responses
from agent_chat.api.schemas import Out
from agent_chat.export.importing import MAX_IMPORT_BYTES, MAX_IMPORT_MB, ImportRefused
from agent_chat.services.imports import import_export

log = logging.getLogger(__name__)
router = APIRouter(tags=["sessions"])


class ImportedOut(Out):
    session_id: str = Field(description="The new session's UUID.")
    session_uuid: str
    title: str
    messages: int = Field(description="How many messages were imported.")
    notes: list[str] = Field(description="What was changed on the way in, e.g. a stopped run.")


def _too_large() -> ApiError:
    return ApiError(413, f"The file is too large; the limit is {MAX_IMPORT_MB} MB.")


async def _read_capped(request: Request) -> bytes:
    """The file's bytes, refusing with 413 as soon as they pass the limit (never all read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_IMPORT_BYTES + 64 * 1024:
        raise _too_large()
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_fields=4)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ApiError(400, 'Send the export as the "file" part of the form.')
        data = await upload.read(MAX_IMPORT_BYTES + 1)
        await form.close()
    else:
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_IMPORT_BYTES:
                raise _too_large()
            chunks.append(chunk)
        data = b"".join(chunks)
    if len(data) > MAX_IMPORT_BYTES:
        raise _too_large()
    return data


@router.post(
    routes.API_SESSIONS_IMPORT,
    status_code=201,
    response_model=ImportedOut,
    responses=responses(400, 413, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                    }
                },
            },
        }
    },
)
async def import_session(svc: Svc, me: Me, request: Request) -> ImportedOut:
    """Import a JSON export (`branch=all` keeps every version) as a new conversation."""
    raw = await _read_capped(request)
    try:
        done = await import_export(svc, user_id=me, raw=raw)
    except ImportRefused as exc:
        # A well-formed JSON document that is no importable export: the file is what's wrong.
        fields = {"file": exc.message} if exc.status == 422 else None
        raise ApiError(exc.status, exc.message, code=exc.code, fields=fields) from exc
    log.info("Imported a conversation (%d messages) as %s", done.messages, done.chat.session_uuid)
    return ImportedOut(
        session_id=done.chat.session_uuid,
        session_uuid=done.chat.session_uuid,
        title=done.chat.title,
        messages=done.messages,
        notes=done.notes,
    )
