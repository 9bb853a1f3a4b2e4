"""Put a conversation's workspace folder back in the state of a checkpoint
(common/checkpoints.py records them).

The folder becomes exactly the manifest: entries it does not hold are removed (a folder with
everything in it; a link unlinked, never followed), missing and changed files are written
from the store, folders made, links made again, modes set. A file that already holds the
recorded bytes is left alone (not rewritten: its time and inode stay). Every write is a
temporary file beside its target (`.hermes-tmp.`: the drawer never lists it) renamed over it,
so the agent never finds half a file, and every name is looked up through its folder's
descriptor (common/checkpoint_files.py): nothing is written or removed outside the folder,
whatever links lie in it.

`keep`: paths left exactly as they are, whatever the checkpoint says (the files a new
message carries into `attachments/`, copied before its run starts). A file recorded but not
stored (over the size limit) or whose stored copy is damaged is left as it is and named in
`Restored.not_restorable`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_chat.common.checkpoint_files import (
    DIR,
    FILE,
    LINK,
    Folders,
    open_file,
    open_folder,
    remove_at,
    split,
    walk,
)
from agent_chat.common.checkpoint_store import Cached, Entry, Manifest, Store, store_of
from agent_chat.common.checkpoints import CHUNK, MAX_ENTRIES
from agent_chat.common.workspaces import TEMP_PREFIX, workspace_dir


class CheckpointMissing(LookupError):
    """The conversation has no checkpoint of that name."""


@dataclass(frozen=True)
class Restored:
    written: int  # files and links written
    removed: int  # entries removed (a folder counts once)
    unchanged: int  # files, folders and links already as recorded
    not_restorable: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class _Now:
    kind: str
    info: os.stat_result


def restore(
    root: Path, session_uuid: str, name: str | None, *, keep: Iterable[str] = ()
) -> Restored:
    """Make the conversation's folder checkpoint `name` (None: the empty folder), leaving
    the paths in `keep` as they are. `CheckpointMissing` when there is no such checkpoint;
    OSError when the folder is a link or cannot be changed (it may then be half restored:
    the caller says so)."""
    started = time.perf_counter()
    store = store_of(root, session_uuid)
    target: Manifest = {}
    if name is not None:
        loaded = store.load(name)
        if loaded is None:
            raise CheckpointMissing(f"no checkpoint {name} in conversation {session_uuid}")
        target = loaded
    folder = workspace_dir(root, session_uuid)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder_fd = open_folder(folder)  # not resolved: the folder itself a link is refused
    folders = Folders(folder_fd)
    try:
        work = _Restore(store, folders, target, keep)
        work.run(folder_fd)
    finally:
        folders.close()
        os.close(folder_fd)
    if name is not None:
        store.set_head(name)
    if store.exists():
        store.write_index(work.index)
    return Restored(
        written=work.written,
        removed=work.removed,
        unchanged=work.unchanged,
        not_restorable=tuple(work.not_restorable),
        seconds=time.perf_counter() - started,
    )


class _Restore:
    def __init__(self, store: Store, folders: Folders, target: Manifest, keep: Iterable[str]):
        self.store = store
        self.folders = folders
        self.target = target
        self.keep_wanted = {p.strip("/") for p in keep if p}
        self.cache = store.read_index() if store.exists() else {}
        self.index: dict[str, Cached] = {}
        self.written = self.removed = self.unchanged = 0
        self.not_restorable: list[str] = []

    def run(self, folder_fd: int) -> None:
        now = {f.path: _Now(f.kind, f.info) for f in walk(folder_fd, limit=MAX_ENTRIES * 2)}
        # Kept: files (or links) that are there; their folders stay folders.
        keep = {p for p in self.keep_wanted if p in now and now[p].kind != DIR}
        keep_dirs = {"/".join(p.split("/")[:i]) for p in keep for i in range(1, p.count("/") + 1)}
        self._remove(now, keep, keep_dirs)

        def kept(path: str) -> bool:  # itself or a folder above it is a kept file
            parts = path.split("/")
            return any("/".join(parts[:i]) in keep for i in range(1, len(parts) + 1))

        dirs = sorted(p for p, e in self.target.items() if e.kind == DIR and not kept(p))
        for path in dirs:
            self._folder(path, now)
        for path, entry in sorted(self.target.items()):
            if entry.kind == DIR or path in keep_dirs or kept(path):
                continue
            if entry.kind == FILE:
                self._file(path, entry, now.get(path))
            else:
                self._link(path, entry, now.get(path))
        for path in reversed(dirs):  # last: a read-only folder is filled first
            if path not in keep_dirs:
                self._mode(path, self.target[path].mode, directory=True)

    def _remove(self, now: dict[str, _Now], keep: set[str], keep_dirs: set[str]) -> None:
        gone: list[str] = []
        for path, found in sorted(now.items()):
            if path in keep or path in keep_dirs:
                continue
            if any(path.startswith(g + "/") for g in gone):
                continue
            wanted = self.target.get(path)
            if wanted is not None and wanted.kind == found.kind:
                continue
            parent, name = split(path)
            remove_at(self.folders.fd(parent), name)
            if found.kind == DIR:
                self.folders.forget(path)
            gone.append(path)
            self.removed += 1
        for path in gone:
            now.pop(path, None)
            for below in [p for p in now if p.startswith(path + "/")]:
                del now[below]

    def _folder(self, path: str, now: dict[str, _Now]) -> None:
        if path in now:
            self.unchanged += 1
            return
        parent, name = split(path)
        os.mkdir(name, 0o700, dir_fd=self.folders.fd(parent))

    def _file(self, path: str, entry: Entry, found: _Now | None) -> None:
        parent, name = split(path)
        parent_fd = self.folders.fd(parent)
        same = found is not None and found.info.st_size == entry.size
        if same and self._holds(path, parent_fd, name, found.info) == entry.sha256:
            if found.info.st_mode & 0o777 != entry.mode:
                self._mode(path, entry.mode)
            self.unchanged += 1
            return
        if not entry.stored:
            self.not_restorable.append(path)
            return
        if not self._write(parent_fd, name, entry):
            self.not_restorable.append(path)
            return
        self.written += 1
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        self.index[path] = Cached(
            info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, entry.sha256,
            time.time_ns(),
        )  # fmt: skip

    def _holds(self, path: str, parent_fd: int, name: str, info: os.stat_result) -> str | None:
        """The SHA-256 of the file there now (the stat cache's, when it vouches for it)."""
        cached = self.cache.get(path)
        if cached is not None and cached.holds(info):
            self.index[path] = cached
            return cached.sha256
        hashed_ns = time.time_ns()
        try:
            fd = open_file(parent_fd, name)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            now = os.fstat(handle.fileno())
        self.index[path] = Cached(
            now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_ino, digest, hashed_ns
        )
        return digest

    def _write(self, parent_fd: int, name: str, entry: Entry) -> bool:
        """The stored bytes as the file `name`, checked against their hash on the way (a
        damaged object is not written: False)."""
        temp = _temp_name()
        try:
            source = open(self.store.object_path(entry.sha256), "rb")  # noqa: SIM115
        except FileNotFoundError:
            return False
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            with source, os.fdopen(os.open(temp, flags, 0o600, dir_fd=parent_fd), "wb") as out:
                digest = hashlib.sha256()
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                os.fchmod(out.fileno(), entry.mode)
            if digest.hexdigest() != entry.sha256:
                os.unlink(temp, dir_fd=parent_fd)
                return False
            os.replace(temp, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent_fd)
            raise
        return True

    def _link(self, path: str, entry: Entry, found: _Now | None) -> None:
        parent, name = split(path)
        parent_fd = self.folders.fd(parent)
        if found is not None and found.kind == LINK:
            with contextlib.suppress(OSError):
                if os.readlink(name, dir_fd=parent_fd) == entry.target:
                    self.unchanged += 1
                    return
        temp = _temp_name()
        os.symlink(entry.target, temp, dir_fd=parent_fd)
        try:
            os.replace(temp, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent_fd)
            raise
        self.written += 1

    def _mode(self, path: str, mode: int, *, directory: bool = False) -> None:
        """chmod through a descriptor opened without following links (Linux has no lchmod)."""
        parent, name = split(path)
        if directory:
            fd = self.folders.fd(path)
            if os.fstat(fd).st_mode & 0o777 != mode:
                os.fchmod(fd, mode)
            return
        fd = open_file(self.folders.fd(parent), name)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _temp_name() -> str:
    return f"{TEMP_PREFIX}checkpoint.{secrets.token_hex(8)}"
