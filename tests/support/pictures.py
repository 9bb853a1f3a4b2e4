"""Small real PNGs written by hand, so no binary file is committed and the test MCP server
needs no imaging package."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

# PNG colour types by channels per pixel: truecolour, truecolour with alpha.
_COLOUR_TYPE = {3: 2, 4: 6}


def png(width: int, height: int, pixel: Callable[[int, int], tuple[int, ...]]) -> bytes:
    """A `width` × `height` PNG whose pixel (x, y) is `pixel(x, y)`: (r, g, b) or (r, g, b, a),
    the same length for every pixel."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )
    colour_type = _COLOUR_TYPE[len(pixel(0, 0))]
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
