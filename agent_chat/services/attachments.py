"""Use cases on attachments: upload (streamed), read the metadata, open for
download, link to a message, and sweep the unused ones. The page, the HTTP API
(api/attachments.py) and later the runs call these.

- **Dedup**: per owner by SHA-256 and name. The same person uploading the same file again
  gets the same attachment row (its `created_at` set to now, so the sweep's grace starts
  again) and the bytes just streamed are deleted; the same bytes under another name are a
  row of their own, so a message always names the file as it was attached. Never across people: nobody can
  learn whether someone else has a file.
- **Limits**: `Settings.max_upload_mb` (AGENT_CHAT_MAX_UPLOAD_MB, 20) per file, refused as
  soon as the stream passes it (413); 0 bytes refused; programs refused by content and by
  name (services/attachment_kinds.py). A refusal, a broken stream or a cancelled upload keeps
  nothing: the store deletes what it had written.
- **Owner**: another person's attachment is `NotFound`, exactly like a missing one.
- **Unused**: `delete_unused` removes attachments no message uses that were last uploaded
  more than `GRACE` ago (an upload waits for its message meanwhile), with their bytes, and
  the database chunks of uploads a crash cut off.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterable, AsyncIterator
from datetime import datetime, timedelta
from uuid import uuid4

from agent_chat.db import attachment_notes
from agent_chat.db import attachments as rows
from agent_chat.db.attachment_models import Attachment
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import utcnow
from agent_chat.services.attachment_kinds import SNIFF_BYTES, clean_name, refusal, sniff
from agent_chat.services.attachment_stores import DatabaseStore, store_for
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id

log = logging.getLogger(__name__)
GRACE = timedelta(hours=24)
MAX_PER_MESSAGE = rows.MAX_PER_MESSAGE


class UploadRefused(ValidationFailed):
    """A file not kept, with the message for the person (on the `file` field), a `code` and
    the HTTP status the API answers (413 too large, 422 otherwise)."""

    def __init__(self, message: str, *, code: str, status: int = 422) -> None:
        super().__init__({"file": message})
        self.message = message
        self.code = code
        self.status = status


def max_upload_bytes(svc: Backend) -> int:
    return svc.settings.max_upload_mb * 1024 * 1024


async def upload(
    svc: Backend, *, user_id: int, name: str | None, chunks: AsyncIterable[bytes]
) -> Attachment:
    """Store the streamed file as the person's attachment (or return the one they have of
    the same bytes). `UploadRefused` when it is empty, too large or a program."""
    clean = clean_name(name)
    if why := refusal("", clean):
        raise UploadRefused(why, code="refused_type")
    limit = max_upload_bytes(svc)
    digest = hashlib.sha256()
    head = bytearray()
    size = 0

    def check_kind() -> None:
        if why := refusal(sniff(bytes(head)), clean):
            raise UploadRefused(why, code="refused_type")

    async def checked() -> AsyncIterator[bytes]:
        nonlocal size
        async for piece in chunks:
            if not piece:
                continue
            size += len(piece)
            if size > limit:
                raise UploadRefused(
                    f"“{clean}” is larger than {svc.settings.max_upload_mb} MB.",
                    code="too_large",
                    status=413,
                )
            digest.update(piece)
            if len(head) < SNIFF_BYTES:
                head.extend(piece[: SNIFF_BYTES - len(head)])
                if len(head) == SNIFF_BYTES:
                    check_kind()  # before the rest of a large program streams in
            yield piece
        if size == 0:
            raise UploadRefused(f"“{clean}” is empty.", code="empty")
        if len(head) < SNIFF_BYTES:
            check_kind()

    store = store_for(svc)
    key = uuid4().hex
    await store.put(key, checked())
    try:
        row, created = await svc.storage.call(
            rows.create_attachment,
            user_id=user_id,
            sha256=digest.hexdigest(),
            name=clean,
            media_type=sniff(bytes(head)),
            size=size,
            storage_key=key,
        )
    except BaseException:
        await store.delete(key)
        raise
    if not created:
        await store.delete(key)
    return row


async def get_attachment(svc: Backend, *, user_id: int, attachment_id: int) -> Attachment:
    """The person's attachment's metadata; another's is NotFound like a missing one."""
    attachment_id = row_id(attachment_id, "Attachment")
    return await svc.storage.call(rows.get_attachment, user_id=user_id, attachment_id=attachment_id)


async def of_messages(
    svc: Backend, *, user_id: int, message_ids: list[int]
) -> dict[int, list[Attachment]]:
    """Each of these messages' files, in order: only the person's own (the caller read the
    messages as theirs; this never lends another's file a name)."""
    found = await svc.storage.call(attachment_notes.message_attachments, message_ids=message_ids)
    return {
        message_id: mine
        for message_id, rows in found.items()
        if (mine := [row for row in rows if row.owner_id == user_id])
    }


async def open_download(
    svc: Backend, *, user_id: int, attachment_id: int
) -> tuple[Attachment, AsyncIterator[bytes]]:
    """The person's attachment and its bytes as a stream (1 MiB pieces). The first piece is
    read here, so bytes missing from the store are a NotFound (logged) before a response
    has begun, not a download that breaks off."""
    row = await get_attachment(svc, user_id=user_id, attachment_id=attachment_id)
    chunks = store_for(svc).open(row.storage_key)
    try:
        first = await anext(chunks, b"")
    except FileNotFoundError:
        first = b""
    if not first:
        await chunks.aclose()
        log.error(
            "attachment %s: its bytes (%s) are missing from the store", row.id, row.storage_key
        )
        raise NotFound(f"The file of attachment {row.id} is missing.")

    async def stream() -> AsyncIterator[bytes]:
        try:
            yield first
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()

    return row, stream()


async def link_to_message(
    svc: Backend, *, user_id: int, message_id: int, attachment_ids: list[int]
) -> list[Attachment]:
    """The person's message uses these attachments of theirs, in this order (replacing the
    ones it had); at most MAX_PER_MESSAGE. Another's message or attachment is NotFound."""
    message_id = row_id(message_id, "Message")
    ids = [row_id(i, "Attachment") for i in attachment_ids]
    if len(set(ids)) > MAX_PER_MESSAGE:
        raise ValidationFailed(
            {"attachmentIds": f"At most {MAX_PER_MESSAGE} attachments per message."}
        )
    return await svc.storage.call(
        rows.link_to_message, user_id=user_id, message_id=message_id, attachment_ids=ids
    )


async def delete_unused(
    svc: Backend, *, grace: timedelta = GRACE, now: datetime | None = None
) -> int:
    """Delete the attachments no message uses, last uploaded before `now - grace`, and
    their bytes; how many. (The app's own work: no person.)"""
    before = (now or utcnow()) - grace
    store = store_for(svc)
    deleted = 0
    while batch := await svc.storage.call(rows.unused_attachments, before=before):
        for row in batch:
            if await svc.storage.call(rows.delete_if_unused, attachment_id=row.id, before=before):
                await store.delete(row.storage_key)
                deleted += 1
        if len(batch) < 500:
            break
    if isinstance(store, DatabaseStore):
        for key in await svc.storage.call(rows.orphan_chunk_keys, before=before):
            await store.delete(key)
    return deleted
