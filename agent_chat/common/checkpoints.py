"""A workspace folder's state recorded as a checkpoint (the store: common/checkpoint_store.py;
putting a folder back: common/checkpoint_restore.py).

`record(root, session_uuid, name)` walks the conversation's folder without following links
(common/checkpoint_files.py) and records every file (its bytes by SHA-256, stored once;
binary files alike), folder (its mode) and link (its target, never followed). A file whose
size, times and inode are as when it was last hashed is not read again (the store's stat
cache), so a checkpoint where one file changed reads and adds about that file.

Limits: a file over `MAX_STORED_BYTES` (50 MiB) is recorded by its size and SHA-256 only and
is not restorable (a restore leaves what is at its path and says so); a folder of more than
`MAX_ENTRIES` entries is not recorded at all (`TooManyEntries`). hermes' temporary files
(`.hermes-tmp.*`, a write under way), pipes, sockets and devices are left out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent_chat.common.checkpoint_files import (
    DIR,
    FILE,
    LINK,
    Found,
    TooManyEntries,
    open_file,
    open_folder,
    walk,
)
from agent_chat.common.checkpoint_store import (
    BadCheckpoint,
    Cached,
    Entry,
    Manifest,
    Store,
    remove_store,
    store_of,
)
from agent_chat.common.workspaces import workspace_dir

__all__ = [
    "MAX_ENTRIES",
    "MAX_STORED_BYTES",
    "BadCheckpoint",
    "Recorded",
    "TooManyEntries",
    "UNDONE",
    "current_name",
    "has_checkpoint",
    "has_store",
    "load",
    "record",
    "remove_store",
    "store_of",
]

UNDONE = "-undone"  # the suffix of an answer's checkpoint after its changes were undone
MAX_STORED_BYTES = 50 * 1024 * 1024  # a file's bytes are kept up to this size
MAX_ENTRIES = 100_000  # files, folders and links of one checkpoint
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Recorded:
    """What recording a checkpoint did."""

    name: str
    files: int
    folders: int
    links: int
    bytes_read: int  # of files hashed (those the stat cache did not vouch for)
    objects_added: int
    bytes_added: int  # new objects' bytes and the manifest's
    not_stored: tuple[str, ...] = field(default=())  # files over the limit: not restorable
    seconds: float = 0.0
    already: bool = False  # recorded before (a run finished twice): kept as it was


@dataclass
class _Tally:
    bytes_read: int = 0
    objects_added: int = 0
    bytes_added: int = 0


def record(
    root: Path, session_uuid: str, name: str, *, max_stored: int = MAX_STORED_BYTES
) -> Recorded:
    """Record the conversation's folder as checkpoint `name`. A checkpoint never changes
    once recorded (a later one may be a delta on it): a name recorded already is kept as it
    is (`already`; a run finished twice, by a takeover or a retried final write, records
    while its answer is RUNNING, so the folder has not changed since). A missing folder is
    an empty checkpoint. OSError when the folder is a link or cannot be read;
    `TooManyEntries` past MAX_ENTRIES (nothing recorded then)."""
    started = time.perf_counter()
    folder = workspace_dir(root, session_uuid)
    store = store_of(root, session_uuid)
    if store.has(name):  # also refuses a malformed name before anything is written
        return Recorded(name, 0, 0, 0, 0, 0, 0, already=True)
    store.ensure()
    store.sweep_temp()
    index = store.read_index()
    new_index: dict[str, Cached] = {}
    manifest: Manifest = {}
    tally = _Tally()
    try:
        folder_fd = open_folder(folder)
    except FileNotFoundError:
        folder_fd = None
    if folder_fd is not None:
        try:
            for found in walk(folder_fd, limit=MAX_ENTRIES):
                entry = _entry(store, found, index, new_index, tally, max_stored)
                if entry is not None:
                    manifest[found.path] = entry
        finally:
            os.close(folder_fd)
    base = store.head()
    size = store.save(name, manifest, base=base)
    tally.bytes_added += size
    store.set_head(name)
    store.write_index(new_index)
    kinds = [e.kind for e in manifest.values()]
    return Recorded(
        name=name,
        files=kinds.count(FILE),
        folders=kinds.count(DIR),
        links=kinds.count(LINK),
        bytes_read=tally.bytes_read,
        objects_added=tally.objects_added,
        bytes_added=tally.bytes_added,
        not_stored=tuple(p for p, e in manifest.items() if e.kind == FILE and not e.stored),
        seconds=time.perf_counter() - started,
    )


def _entry(
    store: Store,
    found: Found,
    index: dict[str, Cached],
    new_index: dict[str, Cached],
    tally: _Tally,
    max_stored: int,
) -> Entry | None:
    mode = found.info.st_mode & 0o777
    if found.kind == DIR:
        return Entry(DIR, mode=mode)
    if found.kind == LINK:
        try:
            return Entry(LINK, target=os.readlink(found.name, dir_fd=found.dir_fd))
        except OSError:
            return None  # gone meanwhile
    if found.kind != FILE:
        return None
    cached = index.get(found.path)
    stored = found.info.st_size <= max_stored
    vouched = cached is not None and cached.holds(found.info)
    if vouched and (not stored or store.has_object(cached.sha256)):
        new_index[found.path] = cached
        return Entry(FILE, mode, cached.size, cached.sha256, stored)
    try:
        return _read(store, found, new_index, tally, max_stored, mode)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None  # gone or swapped meanwhile: as if it had never been there


def _read(
    store: Store,
    found: Found,
    new_index: dict[str, Cached],
    tally: _Tally,
    max_stored: int,
    mode: int,
) -> Entry:
    """Hash the file and, up to `max_stored`, copy its bytes into the store as they are read,
    so the object holds exactly the bytes its name is the hash of (even when the file
    changes meanwhile)."""
    hashed_ns = time.time_ns()
    fd = open_file(found.dir_fd, found.name)
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        keep = info.st_size <= max_stored
        digest, size = hashlib.sha256(), 0
        temp_fd, temp = store.temp() if keep else (None, None)
        try:
            with (
                os.fdopen(temp_fd, "wb") if temp_fd is not None else contextlib.nullcontext() as out
            ):
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
                    if out is not None:
                        out.write(chunk)
            sha = digest.hexdigest()
            stored = keep and size <= max_stored
            if temp is not None:
                if stored and store.add_object(temp, sha):
                    tally.objects_added += 1
                    tally.bytes_added += size
                elif temp.exists():
                    temp.unlink()
        except BaseException:
            if temp is not None:
                with contextlib.suppress(FileNotFoundError):
                    temp.unlink()
            raise
    tally.bytes_read += size
    if size == info.st_size:  # read whole as it was stat'ed: the cache may vouch for it
        new_index[found.path] = Cached(
            info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, sha, hashed_ns
        )
    return Entry(FILE, mode, size, sha, stored)


def load(root: Path, session_uuid: str, name: str) -> Manifest | None:
    """Checkpoint `name` of the conversation, or None when it has none of that name
    (`BadCheckpoint` when it cannot be read)."""
    return store_of(root, session_uuid).load(name)


def has_store(root: Path, session_uuid: str) -> bool:
    """Whether a checkpoint was ever recorded in the conversation."""
    return store_of(root, session_uuid).exists()


def has_checkpoint(root: Path, session_uuid: str, name: str) -> bool:
    return store_of(root, session_uuid).has(name)


def current_name(root: Path, session_uuid: str, answer_id: int | str) -> str | None:
    """The name of the answer's checkpoint as its files stand: the one recorded when its
    changes were undone (`<id>-undone`: a checkpoint never changes, so an undo is a new one)
    or the one its run recorded (`<id>`); None when it has neither."""
    store = store_of(root, session_uuid)
    for name in (f"{answer_id}{UNDONE}", str(answer_id)):
        if store.has(name):
            return name
    return None
