"""The bytes of a JSON export "with files": each file's `data` (base64), read through the
store piece by piece, within one total limit.

`FILES_LIMIT_BYTES` is what an import can read back: `importing.MAX_IMPORT_BYTES` leaves room
for it in base64. A file is counted once per message that carries it (its `data` is written
on each); files that would pass the limit, and files whose bytes are missing or changed in
the store, are left out and listed in the export (`FileData.left_out`), never cut.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import human_size
from agent_chat.db.errors import NotFound
from agent_chat.export.reading import SessionExport

FILES_LIMIT_MB = 20
FILES_LIMIT_BYTES = FILES_LIMIT_MB * 1024 * 1024

# How an export opens a file's bytes: the owner-checked download (services/attachments).
OpenBytes = Callable[[Attachment], Awaitable[AsyncIterator[bytes]]]


@dataclass(frozen=True)
class FileData:
    """What a "with files" export carries beyond the files' names."""

    limit_bytes: int
    data: dict[int, str] = field(default_factory=dict)  # attachment id → base64 of its bytes
    left_out: list[dict[str, Any]] = field(default_factory=list)  # message_id, name, size, why


class _Changed(Exception):
    """The store's bytes are not the file's (another size or SHA-256)."""


def limit_text(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else human_size(limit)


async def _base64_of(row: Attachment, chunks: AsyncIterator[bytes]) -> str:
    """The bytes as base64, encoded as they stream (a whole number of 3-byte groups per
    piece, so the pieces join into one valid text); checked against the row's SHA-256."""
    digest = hashlib.sha256()
    pieces: list[str] = []
    rest = b""
    size = 0
    try:
        async for chunk in chunks:
            digest.update(chunk)
            size += len(chunk)
            buffer = rest + chunk
            cut = len(buffer) - len(buffer) % 3
            pieces.append(base64.b64encode(buffer[:cut]).decode("ascii"))
            rest = buffer[cut:]
    finally:
        await chunks.aclose()
    pieces.append(base64.b64encode(rest).decode("ascii"))
    if size != row.size or digest.hexdigest() != row.sha256:
        raise _Changed
    return "".join(pieces)


def _in_order(data: SessionExport) -> tuple[list[Attachment], dict[int, list[int]]]:
    """Each file once, in the order the document names them, and the messages carrying it."""
    rows: dict[int, Attachment] = {}
    carried_by: dict[int, list[int]] = {}
    for message in data.messages:
        for row in data.attachments.get(message.id or 0, []):
            rows.setdefault(row.id or 0, row)
            carried_by.setdefault(row.id or 0, []).append(message.id or 0)
    return list(rows.values()), carried_by


async def gather_files(
    data: SessionExport, open_bytes: OpenBytes, *, limit: int = FILES_LIMIT_BYTES
) -> FileData:
    """The base64 of every file the export names that fits in `limit` (in document order:
    a file too large to fit leaves room for smaller ones after it), and what was left out."""
    found = FileData(limit_bytes=limit)
    rows, carried_by = _in_order(data)
    total = 0
    for row in rows:
        messages = carried_by[row.id or 0]
        cost = row.size * len(messages)
        why = ""
        if total + cost > limit:
            why = f"over the export's limit of {limit_text(limit)} for files"
        else:
            try:
                found.data[row.id or 0] = await _base64_of(row, await open_bytes(row))
                total += cost
            except NotFound:
                why = "its bytes are missing from the store"
            except _Changed:
                why = "its stored bytes do not match it"
        if why:
            found.left_out.extend(
                {"message_id": mid, "name": row.name, "size": row.size, "why": why}
                for mid in messages
            )
    return found
