"""Thumbnails of attached pictures, made on the server with Pillow: a message shows a small
picture (at most `SIDE` pixels a side, WebP) instead of loading every full image, so a
conversation with many pictures opens as fast as one without.

A thumbnail is made on first request in a worker thread and kept in a small per-process
cache (`CACHE_ITEMS`); the browser keeps it too (the bytes of an attachment id never change).
A picture declaring more than `MAX_PIXELS` (a decompression bomb), or one Pillow cannot read
(a `.png` that is not one), has no thumbnail (`NoThumbnail`, a 404
with the reason).
"""

from __future__ import annotations

import asyncio
import io
from collections import OrderedDict

from PIL import Image, UnidentifiedImageError

from agent_chat.db.attachment_models import IMAGE_TYPES, Attachment
from agent_chat.db.errors import NotFound
from agent_chat.services.attachment_stores import store_for
from agent_chat.services.attachments import get_attachment
from agent_chat.services.backend import Backend

SIDE = 320  # pixels, the longer side (twice the page's 140-160 px: sharp on HiDPI screens)
MAX_PIXELS = 50_000_000  # a 50-megapixel photo is fine; a "bomb" declaring more is refused
CACHE_ITEMS = 256  # about 256 × 15 kB
_SLOTS = asyncio.Semaphore(2)  # two decodes at once at most: the app's two cores stay usable
_cache: OrderedDict[str, bytes] = OrderedDict()


class NoThumbnail(NotFound):
    """Not a picture this app previews, or not readable as one: the thumbnail does not exist
    (the API's 422 naming the attachment, with the reason; the attachment itself exists)."""


def make_thumbnail(data: bytes) -> bytes:
    """The picture shrunk to fit SIDE × SIDE (never enlarged), as WebP. Its declared size is
    checked before any pixel is decoded (Pillow's own limit, 89 megapixels, is process-wide
    and only warns below twice that)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_PIXELS:
                raise NoThumbnail("The picture is too large to preview.")
            image.draft("RGB", (SIDE, SIDE))  # JPEG: decode at a reduced scale, cheaply
            image.thumbnail((SIDE, SIDE))
            keep_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
            small = image.convert("RGBA" if keep_alpha else "RGB")
            out = io.BytesIO()
            small.save(out, "WEBP", quality=80, method=4)
            return out.getvalue()
    except Image.DecompressionBombError as exc:
        raise NoThumbnail("The picture is too large to preview.") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise NoThumbnail("The file is not a picture this app can read.") from exc


async def thumbnail(svc: Backend, *, user_id: int, attachment_id: int) -> tuple[Attachment, bytes]:
    """The person's attachment and its thumbnail; another's is NotFound like a missing one."""
    row = await get_attachment(svc, user_id=user_id, attachment_id=attachment_id)
    return row, await thumbnail_of(svc, row)


async def thumbnail_of(svc: Backend, row: Attachment) -> bytes:
    """The thumbnail of an attachment the caller has checked is the person's."""
    if row.media_type not in IMAGE_TYPES:
        raise NoThumbnail(f"“{row.name}” is not a picture ({row.media_type}).")
    if (found := _cache.get(row.sha256)) is not None:
        _cache.move_to_end(row.sha256)
        return found
    async with _SLOTS:
        chunks = store_for(svc).open(row.storage_key)
        try:
            data = b"".join([chunk async for chunk in chunks])
        finally:
            await chunks.aclose()
        made = await asyncio.to_thread(make_thumbnail, data)
    _cache[row.sha256] = made
    while len(_cache) > CACHE_ITEMS:
        _cache.popitem(last=False)
    return made
