"""The one store interface (services/attachment_stores.py), the same bodies on the database
store and on a bucket of a real S3 API server (moto's server process): bytes come back as
they went in, in bounded pieces; a stream that breaks half-way keeps nothing; delete."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from agent_chat.db.attachment_models import CHUNK_BYTES
from agent_chat.services.attachment_stores import PART_BYTES, store_for


async def _stream(data: bytes, piece: int = 64 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


async def _read(store, key: str) -> tuple[bytes, int]:
    out = bytearray()
    largest = 0
    async for chunk in store.open(key):
        largest = max(largest, len(chunk))
        out += chunk
    return bytes(out), largest


@pytest.mark.parametrize("size", [1, CHUNK_BYTES, PART_BYTES + CHUNK_BYTES + 17])
async def test_round_trip_in_bounded_pieces(svc, kept, size: int) -> None:
    store = store_for(svc)
    data = os.urandom(size)
    await store.put("k1", _stream(data))
    back, largest = await _read(store, "k1")
    assert back == data
    assert largest <= CHUNK_BYTES  # a download never holds more than a chunk
    assert kept.count() == 1
    await store.delete("k1")
    assert kept.count() == 0


async def test_a_stream_broken_half_way_keeps_nothing(svc, kept) -> None:
    store = store_for(svc)

    async def broken() -> AsyncIterator[bytes]:
        data = os.urandom(PART_BYTES + CHUNK_BYTES)  # past the first part and chunk
        async for piece in _stream(data):
            yield piece
        raise ConnectionResetError("the client went away")

    with pytest.raises(ConnectionResetError):
        await store.put("k2", broken())
    assert kept.count() == 0


async def test_delete_of_a_missing_key_is_harmless(svc, kept) -> None:
    await store_for(svc).delete("nothing-here")
    assert kept.count() == 0
