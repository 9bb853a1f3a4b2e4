"""Thumbnails of attached pictures (services/attachment_thumbs.py), on both stores: at most
320 pixels a side as WebP, never enlarged, transparency kept; a file that only claims to be
a picture, a decompression bomb (a header declaring a huge image) and a non-picture have
none (a 404 with the reason); another person's picture is NotFound like a missing one."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import AsyncIterator

import pytest
from PIL import Image

from agent_chat.db.errors import NotFound
from agent_chat.services import attachment_thumbs as thumbs
from agent_chat.services import attachments as use
from agent_chat.services.attachment_thumbs import NoThumbnail, make_thumbnail


def _picture(size: tuple[int, int], fmt: str, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (200, 30, 30, 128) if mode == "RGBA" else (200, 30, 30)).save(out, fmt)
    return out.getvalue()


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header declares `width` × `height` and whose pixels are a few bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def _size(webp: bytes) -> tuple[int, int, str]:
    with Image.open(io.BytesIO(webp)) as image:
        assert image.format == "WEBP"
        return image.width, image.height, image.mode


def test_a_big_photo_shrinks_and_a_small_one_stays_its_size() -> None:
    assert _size(make_thumbnail(_picture((2000, 1500), "JPEG"))) == (320, 240, "RGB")
    assert _size(make_thumbnail(_picture((1000, 3000), "PNG")))[:2] == (107, 320)
    assert _size(make_thumbnail(_picture((8, 8), "PNG")))[:2] == (8, 8)
    assert _size(make_thumbnail(_picture((400, 400), "PNG", "RGBA")))[2] == "RGBA"
    assert _size(make_thumbnail(_picture((64, 64), "GIF")))[:2] == (64, 64)


def test_what_has_no_thumbnail_says_why() -> None:
    with pytest.raises(NoThumbnail, match="too large"):
        make_thumbnail(_png_header_only(60_000, 60_000))
    with pytest.raises(NoThumbnail, match="too large"):
        make_thumbnail(_png_header_only(10_000, 6_000))  # 60 MP: over our limit, under Pillow's
    with pytest.raises(NoThumbnail, match="not a picture"):
        make_thumbnail(_picture((50, 50), "PNG")[:60])  # cut off
    with pytest.raises(NoThumbnail, match="not a picture"):
        make_thumbnail(b"\x89PNG\r\n\x1a\n" + b"junk" * 30)


async def _stream(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def test_the_owner_gets_a_thumbnail_others_get_not_found(svc, user, other_user) -> None:
    photo = _picture((900, 600), "JPEG")
    row = await use.upload(svc, user_id=user, name="photo.jpg", chunks=_stream(photo))
    got, data = await thumbs.thumbnail(svc, user_id=user, attachment_id=row.id)
    assert got.id == row.id and _size(data) == (320, 213, "RGB")
    again = await thumbs.thumbnail(svc, user_id=user, attachment_id=row.id)
    assert again[1] == data  # kept: not made twice
    with pytest.raises(NotFound):
        await thumbs.thumbnail(svc, user_id=other_user, attachment_id=row.id)
    text = await use.upload(svc, user_id=user, name="a.csv", chunks=_stream(b"a,b\n1,2\n"))
    with pytest.raises(NoThumbnail, match="not a picture"):
        await thumbs.thumbnail(svc, user_id=user, attachment_id=text.id)
