"""The attachments' use cases (services/attachments.py) on either store (`svc` is both):
dedup per owner, the size limit, empty files, refused programs, an upload cut off half-way,
two people who cannot see each other's attachments, links to messages and the sweep."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from agent_chat.db import sessions
from agent_chat.db.attachment_models import CHUNK_BYTES
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.messages import append_message
from agent_chat.db.models import MessageRole, MessageStatus, utcnow
from agent_chat.services import attachments as use
from agent_chat.services.attachment_stores import PART_BYTES
from agent_chat.services.attachments import UploadRefused

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\x00" * 64
MIB = 1024 * 1024
ELF = b"\x7fELF\x02\x01\x01" + b"\x00" * 200


async def _stream(data: bytes, piece: int = 64 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


async def _up(svc, user: int, data: bytes, name: str = "f.bin"):
    return await use.upload(svc, user_id=user, name=name, chunks=_stream(data))


async def _download(svc, user: int, attachment_id: int) -> bytes:
    _, chunks = await use.open_download(svc, user_id=user, attachment_id=attachment_id)
    return b"".join([c async for c in chunks])


async def test_upload_sniffs_and_returns_the_bytes(svc, user, kept) -> None:
    row = await _up(svc, user, PNG, name="../../etc/photo.jpg")
    assert (row.name, row.media_type, row.size) == ("photo.jpg", "image/png", len(PNG))
    text = await _up(svc, user, "naïve, 日本語\n".encode(), name="notes.md")
    assert text.media_type == "text/plain"
    assert await _download(svc, user, row.id) == PNG
    assert kept.count() == 2


async def test_same_bytes_same_owner_is_the_same_attachment(svc, user, other_user, kept) -> None:
    first = await _up(svc, user, PNG, name="a.png")
    again = await _up(svc, user, PNG, name="a.png")
    assert again.id == first.id and again.name == "a.png"
    renamed = await _up(svc, user, PNG, name="b.png")  # the name a message shows is its own
    assert renamed.id != first.id and renamed.name == "b.png"
    theirs = await _up(svc, other_user, PNG, name="a.png")
    assert theirs.id != first.id  # never shared across people
    assert kept.count() == 3  # the second upload's bytes were deleted


async def test_limits_empty_and_programs_keep_nothing(svc, user, kept) -> None:
    with pytest.raises(UploadRefused) as big:
        await _up(svc, user, os.urandom(2 * 1024 * 1024 + 1))
    assert big.value.status == 413 and "2 MB" in big.value.message
    await _up(svc, user, os.urandom(2 * 1024 * 1024))  # exactly the limit is fine
    with pytest.raises(UploadRefused) as empty:
        await _up(svc, user, b"", name="nothing.txt")
    assert empty.value.code == "empty" and "nothing.txt" in empty.value.message
    with pytest.raises(UploadRefused) as elf:
        await _up(svc, user, ELF, name="tool")
    assert elf.value.code == "refused_type" and "program" in elf.value.message
    with pytest.raises(UploadRefused):
        await _up(svc, user, b"echo hi\r\n", name="run.BAT")
    assert isinstance(elf.value, ValidationFailed)  # the API's 422 with the `file` field
    assert kept.count() == 1


async def test_an_upload_cut_off_half_way_stores_nothing(svc, user, kept) -> None:
    async def cut() -> AsyncIterator[bytes]:
        yield os.urandom(1024 * 1024 + 5)
        raise ConnectionResetError("client disconnected")

    with pytest.raises(ConnectionResetError):
        await use.upload(svc, user_id=user, name="half.bin", chunks=cut())

    async def cancelled() -> None:
        async def slow() -> AsyncIterator[bytes]:
            yield os.urandom(1024 * 1024 + 5)
            await asyncio.sleep(30)
            yield b"never"

        await use.upload(svc, user_id=user, name="half.bin", chunks=slow())

    task = asyncio.create_task(cancelled())
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert kept.count() == 0


async def test_another_persons_attachment_is_not_found_like_a_missing_one(
    svc, user, other_user
) -> None:
    mine = await _up(svc, user, PNG)
    with pytest.raises(NotFound) as theirs:
        await use.get_attachment(svc, user_id=other_user, attachment_id=mine.id)
    with pytest.raises(NotFound) as missing:
        await use.get_attachment(svc, user_id=other_user, attachment_id=mine.id + 1000)
    assert str(theirs.value) == str(missing.value).replace(str(mine.id + 1000), str(mine.id))
    with pytest.raises(NotFound):
        await use.open_download(svc, user_id=other_user, attachment_id=mine.id)
    with pytest.raises(NotFound):
        await use.get_attachment(svc, user_id=user, attachment_id="1")  # type: ignore[arg-type]


async def _message(svc, user: int) -> int:
    chat = await svc.storage.call(sessions.create_session, user_id=user, title="t")
    message = await svc.storage.call(
        append_message,
        chat_session_id=chat.id,
        parent_id=None,
        role=MessageRole.USER,
        content="look",
        status=MessageStatus.SENT,
    )
    return message.id


async def test_links_and_the_sweep_of_unused_attachments(svc, user, other_user, kept) -> None:
    used = await _up(svc, user, PNG)
    unused = await _up(svc, user, b"plain text")
    message_id = await _message(svc, user)
    linked = await use.link_to_message(
        svc, user_id=user, message_id=message_id, attachment_ids=[used.id]
    )
    assert [a.id for a in linked] == [used.id]
    with pytest.raises(NotFound):  # another's message, or another's attachment
        await use.link_to_message(
            svc, user_id=other_user, message_id=message_id, attachment_ids=[used.id]
        )
    with pytest.raises(ValidationFailed):
        await use.link_to_message(
            svc, user_id=user, message_id=message_id, attachment_ids=list(range(1, 12))
        )
    # Within the grace period nothing goes; after it, only the unused one.
    assert await use.delete_unused(svc) == 0
    later = utcnow() + timedelta(hours=25)
    assert await use.delete_unused(svc, now=later) == 1
    with pytest.raises(NotFound):
        await use.get_attachment(svc, user_id=user, attachment_id=unused.id)
    assert await _download(svc, user, used.id) == PNG
    assert kept.count() == 1


async def test_the_sweep_runs_as_a_periodic_check(svc, user, kept) -> None:
    from agent_chat.services.attachment_sweep import AttachmentSweep

    await _up(svc, user, b"old and unused")
    sweep = AttachmentSweep(svc, interval_s=3600)
    assert await sweep.check() == 0  # within the grace period
    assert kept.count() == 1


async def test_a_20_mb_upload_and_download_stream_in_bounded_memory(
    svc, user, store_kind: str
) -> None:
    """Neither way holds the file: Python's peak allocation stays far under its size."""
    svc.settings.max_upload_mb = 20
    size = 20 * 1024 * 1024

    async def generated() -> AsyncIterator[bytes]:
        block = os.urandom(64 * 1024)
        for _ in range(size // len(block)):
            yield block

    tracemalloc.start()
    try:
        row = await use.upload(svc, user_id=user, name="big.bin", chunks=generated())
        _, upload_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        _, chunks = await use.open_download(svc, user_id=user, attachment_id=row.id)
        total = 0
        async for chunk in chunks:
            total += len(chunk)
        _, download_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert row.size == total == size
    # At most the piece being gathered and the one being written (S3's parts are 5 MiB, the
    # database's chunks 1 MiB), plus the client's own; a download a few chunks (urllib3's
    # buffers with S3: 3-5 MiB measured).
    piece = PART_BYTES if store_kind == "s3" else CHUNK_BYTES
    assert upload_peak < 2 * piece + 2 * MIB, upload_peak
    assert download_peak < 8 * MIB, download_peak


async def test_bytes_missing_from_the_store_are_not_found_before_a_download_begins(
    svc, user
) -> None:
    from agent_chat.services.attachment_stores import store_for

    row = await _up(svc, user, PNG)
    await store_for(svc).delete(row.storage_key)
    with pytest.raises(NotFound, match="missing"):
        await use.open_download(svc, user_id=user, attachment_id=row.id)
