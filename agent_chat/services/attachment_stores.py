"""Where the attachments' bytes are: one interface, two stores.

- `DatabaseStore` (the default): rows of `attachment_chunk`, 1 MiB each, each written in its
  own transaction as the upload streams and read one at a time by a download. Every worker
  and host that reaches the database reads them; nothing on a disk.
- `S3Store` (`AGENT_CHAT_S3_BUCKET`, `config.S3Settings`): the object `<prefix><key>` in an
  S3-compatible bucket (AWS, MinIO, Ceph, R2 …) through boto3: one PUT for a file under
  `PART_BYTES`, else a multipart upload of `PART_BYTES` parts (S3's smallest), aborted when
  the upload fails.

`put` takes the bytes as an async iterable and keeps all of them or, when the iterable or the
store fails (or the task is cancelled), none. The caller names the key (a random hex string).
`open` of a key the store does not have yields nothing (database) or raises
FileNotFoundError (S3).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterable, AsyncIterator
from functools import cache
from typing import Any, Protocol

from agent_chat.config import S3Settings
from agent_chat.db import attachments as rows
from agent_chat.db.attachment_models import CHUNK_BYTES
from agent_chat.runs.storage import Storage

PART_BYTES = 5 * 1024 * 1024


class AttachmentStore(Protocol):
    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None: ...

    def open(self, key: str) -> AsyncIterator[bytes]: ...

    async def delete(self, key: str) -> None: ...


async def _pieces(chunks: AsyncIterable[bytes], size: int) -> AsyncIterator[bytes]:
    """The stream again in pieces of exactly `size` bytes (the last one shorter)."""
    buffer = bytearray()
    async for chunk in chunks:
        buffer += chunk
        while len(buffer) >= size:
            with memoryview(buffer) as view:  # one copy of the piece, not two
                piece = bytes(view[:size])
                buffer = bytearray(view[size:])  # the old buffer's memory goes now
            yield piece
            del piece  # held only by the consumer, until it is done with it
    if buffer:
        yield bytes(buffer)


class DatabaseStore:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        try:
            seq = 0
            async for piece in _pieces(chunks, CHUNK_BYTES):
                await self.storage.call(rows.put_chunk, storage_key=key, seq=seq, data=piece)
                del piece  # not held while the next chunk is gathered
                seq += 1
        except BaseException:
            await asyncio.shield(self.delete(key))
            raise

    async def open(self, key: str) -> AsyncIterator[bytes]:
        seq = 0
        while True:
            data = await self.storage.call(rows.read_chunk, storage_key=key, seq=seq)
            if data is None:
                return
            yield data
            seq += 1

    async def delete(self, key: str) -> None:
        await self.storage.call(rows.delete_chunks, storage_key=key)


class S3Store:
    def __init__(self, settings: S3Settings) -> None:
        import boto3  # only with a bucket configured: boto3 costs its import otherwise
        from botocore.config import Config

        self.bucket = settings.bucket
        self.prefix = settings.prefix
        self.client: Any = boto3.client(
            "s3",
            endpoint_url=settings.endpoint_url,
            aws_access_key_id=settings.access_key_id,
            aws_secret_access_key=settings.secret_access_key,
            region_name=settings.region,
            config=Config(retries={"max_attempts": 3, "mode": "standard"}),
        )

    def _key(self, key: str) -> str:
        return self.prefix + key

    async def _call(self, method: str, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.client, method), Bucket=self.bucket, **kwargs)

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        name = self._key(key)
        upload_id: str | None = None
        parts: list[dict[str, Any]] = []
        try:
            async for piece in _pieces(chunks, PART_BYTES):
                if upload_id is None:
                    if len(piece) < PART_BYTES:  # the whole file in one piece
                        await self._call("put_object", Key=name, Body=io.BytesIO(piece))
                        return
                    started = await self._call("create_multipart_upload", Key=name)
                    upload_id = started["UploadId"]
                number = len(parts) + 1
                with io.BytesIO(piece) as body:
                    done = await self._call(
                        "upload_part", Key=name, UploadId=upload_id, PartNumber=number, Body=body
                    )
                # Not held while the next part is gathered: the worker thread may still hold
                # the closed `body` for a moment, but no longer its bytes.
                del piece
                parts.append({"PartNumber": number, "ETag": done["ETag"]})
            if upload_id is None:  # no bytes at all (the service refuses those first)
                await self._call("put_object", Key=name, Body=b"")
                return
            await self._call(
                "complete_multipart_upload",
                Key=name,
                UploadId=upload_id,
                MultipartUpload={"Parts": parts},
            )
        except BaseException:
            if upload_id is not None:
                await asyncio.shield(
                    self._call("abort_multipart_upload", Key=name, UploadId=upload_id)
                )
            raise

    async def open(self, key: str) -> AsyncIterator[bytes]:
        try:
            got = await self._call("get_object", Key=self._key(key))
        except self.client.exceptions.NoSuchKey as exc:
            raise FileNotFoundError(key) from exc
        body = got["Body"]
        try:
            while data := await asyncio.to_thread(body.read, CHUNK_BYTES):
                yield data
        finally:
            await asyncio.to_thread(body.close)

    async def delete(self, key: str) -> None:
        await self._call("delete_object", Key=self._key(key))


@cache
def _s3_store(settings: S3Settings) -> S3Store:
    return S3Store(settings)


def store_for(svc: Any) -> AttachmentStore:
    """The store of this process's settings: the bucket when one is configured (one client
    per process), else the database behind `svc.storage`."""
    s3 = getattr(getattr(svc, "settings", None), "s3", None)
    if s3 is not None:
        return _s3_store(s3)
    return DatabaseStore(svc.storage)
