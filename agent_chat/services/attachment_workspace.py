"""A Workspace conversation's attachments as files its agent can open with its file tools.

Each file a message carries is copied into the conversation's folder (common/workspaces.py:
the one the bridge anchors the agent's tools in) as `attachments/<name>`, and the agent's
message names the path (services/attachment_parts.py). That matters most for what the
message does not inline: a PDF past the limit, an archive, an image for a model that does
not read images.

- A name taken by other bytes: "name (2).ext", "name (3).ext" …; the same bytes already
  under one of those names are not copied again (a regenerate or an edit finds them there).
- Streamed from the attachment store a chunk at a time into a hidden temporary file
  (`TEMP_PREFIX`: the drawer never lists it), named only once complete and checked (size and
  SHA-256), so the agent never finds half a file.
- Fenced: the name has no folders (attachment_kinds.clean_name), every write goes through a
  descriptor of `attachments/` opened without following links, and each path is resolved
  and checked to stay inside.
- A copy that fails (a full disk, permissions, the store) never fails the message: the
  agent reads that the file could not be saved, and why.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import logging
import os
import secrets
from pathlib import Path
from typing import IO, Any

from agent_chat.common.workspaces import (
    TEMP_PREFIX,
    free_bytes,
    holds,
    inside,
    numbered,
    open_subfolder,
    place,
    workspaces_root,
)
from agent_chat.db.attachment_models import Attachment
from agent_chat.services.attachment_kinds import clean_name
from agent_chat.services.attachment_stores import store_for

log = logging.getLogger(__name__)

ATTACHMENTS_DIR = "attachments"
MAX_NUMBERED = 100  # "name (100).ext" at most: past that the copy fails, said


class CopyFailed(Exception):
    """Why a file could not be saved, in words for the agent."""


async def save_line(svc: Any, *, session_uuid: str, row: Attachment) -> tuple[str, str | None]:
    """The line under the file's block (where it is in the workspace, or why it is not) and
    its path there (None when it could not be saved)."""
    try:
        path = await save(svc, session_uuid=session_uuid, row=row)
    except Exception as exc:  # never the message's failure: the run goes on without it
        log.warning("Attachment %s not saved in workspace %s: %r", row.id, session_uuid, exc)
        return f"{row.name} could not be saved in your workspace ({_reason(exc)}).", None
    return f"Saved in your workspace as {path}", path


def _reason(exc: Exception) -> str:
    if isinstance(exc, CopyFailed):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    return "an unexpected error"


async def save(svc: Any, *, session_uuid: str, row: Attachment, root: Path | None = None) -> str:
    """The file's path in the workspace ("attachments/<name>"), copied there unless the
    same bytes are there already."""
    root = workspaces_root() if root is None else root
    name = clean_name(row.name)  # cleaned at upload; again, as this names a file on disk
    folder, dir_fd = await asyncio.to_thread(open_subfolder, root, session_uuid, ATTACHMENTS_DIR)
    try:
        target, n, same = await asyncio.to_thread(_find, folder, dir_fd, name, row, 1)
        if not same:
            target = await _copy_as(svc, folder, dir_fd, name, row, n)
    finally:
        os.close(dir_fd)
    return f"{ATTACHMENTS_DIR}/{target}"


def _find(
    folder: Path, dir_fd: int, name: str, row: Attachment, start: int
) -> tuple[str, int, bool]:
    """From the `start`-th of name, name (2) …: the first that holds the file's bytes (True)
    or is free (False), with its number."""
    for n in range(start, MAX_NUMBERED + 1):
        candidate = numbered(name, n)
        if not inside(folder, folder / candidate):  # a link leading out: taken, never used
            continue
        found = holds(dir_fd, candidate, row.size, row.sha256)
        if found is False:  # other bytes, or not a plain file
            continue
        return candidate, n, bool(found)
    raise CopyFailed(f"{MAX_NUMBERED} files of that name are there already")


async def _copy_as(svc: Any, folder: Path, dir_fd: int, name: str, row: Attachment, n: int) -> str:
    if await asyncio.to_thread(free_bytes, dir_fd) < row.size:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    temp = TEMP_PREFIX + secrets.token_hex(8)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = await asyncio.to_thread(os.open, temp, flags, 0o644, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            await _stream(svc, row, handle)
        while True:  # another copy may take the name meanwhile: the next one, or its bytes
            target = numbered(name, n)
            if await asyncio.to_thread(place, dir_fd, temp, target):
                return target
            target, n, same = await asyncio.to_thread(_find, folder, dir_fd, name, row, n)
            if same:
                return target
    finally:
        with contextlib.suppress(FileNotFoundError):  # linked: the name keeps the bytes
            await asyncio.to_thread(os.unlink, temp, dir_fd=dir_fd)


async def _stream(svc: Any, row: Attachment, handle: IO[bytes]) -> None:
    """The stored bytes into `handle`, one chunk held at a time; `CopyFailed` when the store
    fails or gives other bytes than the upload's."""
    digest = hashlib.sha256()
    written = 0
    chunks = store_for(svc).open(row.storage_key)
    try:
        while True:
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except Exception as exc:
                raise CopyFailed("its bytes could not be read from the attachment store") from exc
            await asyncio.to_thread(handle.write, chunk)
            digest.update(chunk)
            written += len(chunk)
    finally:
        await chunks.aclose()
    if written != row.size or digest.hexdigest() != row.sha256:
        raise CopyFailed("the attachment store gave other bytes than were uploaded")
    await asyncio.to_thread(handle.flush)
