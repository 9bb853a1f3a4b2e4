"""Attachments over the HTTP API (services/attachments.py): upload and download.

- `POST /api/chat/attachments`: a multipart/form-data form of 1-10 files (parts `files`;
  any part with a file name counts, a part without one is a plain field, skipped), each streamed to the store as it arrives
  (api/uploads.py). Answers their ids, names, sizes, sniffed media types and SHA-256, in the
  form's order; the same file (bytes and name) uploaded again by the same person gives the
  same id. 413 for
  a file over AGENT_CHAT_MAX_UPLOAD_MB, 422 for an empty file or a program (`file` field);
  the files before a refused one stay stored (unused: the sweep removes them).
- `GET /api/chat/attachments/{id}`: the person's file, streamed, as a download
  (`Content-Disposition: attachment`), with `X-Content-Type-Options: nosniff` and its
  sniffed type, never one a browser renders as a page (HTML, SVG: octet-stream instead).
  Another person's id is the same 404 as a missing one.
- `GET /api/chat/attachments/{id}/thumbnail`: a picture's WebP thumbnail, at most 320 pixels
  a side (services/attachment_thumbs.py); 404 with the reason for a file that is not a
  picture it can read.
"""

from __future__ import annotations

import unicodedata

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response, StreamingResponse

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import ApiError, responses
from agent_chat.api.export import content_disposition
from agent_chat.api.schemas import MAX_ID, AttachmentList, attachment_out
from agent_chat.api.uploads import MultipartReader
from agent_chat.db.attachment_models import Attachment
from agent_chat.services import attachment_thumbs, attachments
from agent_chat.services.attachment_kinds import served_type
from agent_chat.services.attachments import MAX_PER_MESSAGE, UploadRefused

router = APIRouter(tags=["attachments"])
AttachmentId = Path(..., ge=1, le=MAX_ID)
MAX_PARTS = 2 * MAX_PER_MESSAGE  # files and plain fields together
FORM_OVERHEAD = 64 * 1024  # per file: its part's headers and the form's boundaries


UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["files"],
                "properties": {
                    "files": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "minItems": 1,
                        "maxItems": MAX_PER_MESSAGE,
                    }
                },
            }
        }
    },
}


@router.post(
    routes.API_ATTACHMENTS,
    status_code=201,
    response_model=AttachmentList,
    responses=responses(400, 413, 422),
    openapi_extra={"requestBody": UPLOAD_BODY},
)
async def upload_attachments(svc: Svc, me: Me, request: Request) -> AttachmentList:
    """Upload 1-10 files (each at most AGENT_CHAT_MAX_UPLOAD_MB; no programs)."""
    limit = attachments.max_upload_bytes(svc)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_PER_MESSAGE * (limit + FORM_OVERHEAD):
        raise ApiError(413, f"At most {MAX_PER_MESSAGE} files of {limit >> 20} MB each.")
    reader = MultipartReader(request)
    stored: list[Attachment] = []
    parts = 0
    async for _field, filename in reader.parts():
        parts += 1
        if parts > MAX_PARTS:
            raise ApiError(422, "Too many form fields.", fields={"files": "Too many parts."})
        if filename is None:
            continue  # a plain field, not a file: skipped
        if len(stored) >= MAX_PER_MESSAGE:
            message = f"At most {MAX_PER_MESSAGE} files at once."
            raise ApiError(422, message, fields={"files": message})
        try:
            row = await attachments.upload(svc, user_id=me, name=filename, chunks=reader.data())
        except UploadRefused as exc:
            raise ApiError(
                exc.status, exc.message, code=exc.code, fields={"file": exc.message}
            ) from exc
        stored.append(row)
    if not stored:
        message = "Send one or more files as the form's `files` parts."
        raise ApiError(422, message, fields={"files": message})
    return AttachmentList(attachments=[attachment_out(row) for row in stored])


def _ascii_name(name: str) -> str:
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    plain = "".join(c if c.isprintable() and c not in '"\\;' else "_" for c in plain).strip()
    return plain or "file"


@router.get(
    routes.API_ATTACHMENT,
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
            "description": "The file, as a download.",
        },
        **responses(404),
    },
)
async def download_attachment(svc: Svc, me: Me, attachment_id: int = AttachmentId):
    """Download one of your attachments."""
    row, chunks = await attachments.open_download(svc, user_id=me, attachment_id=attachment_id)
    headers = {
        "Content-Disposition": content_disposition(row.name, _ascii_name(row.name)),
        "Content-Length": str(row.size),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'",
        "Cache-Control": "private, no-cache",
        "ETag": f'"{row.sha256}"',
    }
    return StreamingResponse(chunks, media_type=served_type(row.media_type), headers=headers)


@router.get(
    routes.API_ATTACHMENT_THUMBNAIL,
    response_class=Response,
    responses={
        200: {
            "content": {"image/webp": {"schema": {"type": "string", "format": "binary"}}},
            "description": "The picture, at most 320 pixels a side.",
        },
        **responses(404, 422),
    },
)
async def attachment_thumbnail(svc: Svc, me: Me, attachment_id: int = AttachmentId) -> Response:
    """A small WebP of one of your attached pictures. 422 (`no_thumbnail`, naming
    `attachmentId`): the attachment is there but is not a picture this app can read, or one
    too large to preview; 404: no attachment of yours has this id."""
    try:
        row, data = await attachment_thumbs.thumbnail(svc, user_id=me, attachment_id=attachment_id)
    except attachment_thumbs.NoThumbnail as exc:
        # Not 404: the attachment exists (a client that just uploaded it must not read
        # "not found"), it only has no thumbnail.
        message = str(exc)
        raise ApiError(422, message, code="no_thumbnail", fields={"attachmentId": message}) from exc
    headers = {
        "X-Content-Type-Options": "nosniff",
        # An attachment's bytes never change: the browser keeps its thumbnail.
        "Cache-Control": "private, max-age=31536000, immutable",
        "ETag": f'"{row.sha256}-thumb"',
    }
    return Response(data, media_type="image/webp", headers=headers)
