"""Walking and changing a workspace folder without ever following a link out of it: the
ground under common/checkpoints.py (record) and common/checkpoint_restore.py (restore).

Every call goes through a descriptor of the folder it acts in (`dir_fd=`), each folder
opened with `O_NOFOLLOW | O_DIRECTORY` from its parent's descriptor, so a name is always
looked up in the folder that was checked, and a link swapped in for a folder is refused
(ELOOP / ENOTDIR) rather than followed. Links are read (`readlink`) and unlinked, never
opened. The same care as common/workspaces.py's `open_subfolder` / `holds`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from agent_chat.common.workspaces import TEMP_PREFIX

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a pipe swapped in for a file never blocks the open.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
FILE, DIR, LINK, OTHER = "file", "dir", "link", "other"


class TooManyEntries(Exception):
    """The folder holds more entries than a checkpoint takes."""


@dataclass(frozen=True)
class Found:
    """One entry of a walked folder: its path ("/"-separated, relative to the folder), its
    name in its parent, the parent's open descriptor (valid while the walk stands on that
    entry) and what `lstat` said."""

    path: str
    name: str
    dir_fd: int
    info: os.stat_result

    @property
    def kind(self) -> str:
        return kind_of(self.info.st_mode)


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return DIR
    if stat.S_ISLNK(mode):
        return LINK
    return OTHER  # a pipe, socket or device: never recorded, removed by a restore


def open_folder(path: os.PathLike[str] | str) -> int:
    """A descriptor of the folder `path` itself; OSError when it is a link or no folder."""
    return os.open(path, DIR_FLAGS)


def open_dir(parent_fd: int, name: str) -> int:
    return os.open(name, DIR_FLAGS, dir_fd=parent_fd)


def open_file(parent_fd: int, name: str) -> int:
    """The regular file `name` opened for reading; OSError for a link or anything else."""
    fd = os.open(name, FILE_FLAGS, dir_fd=parent_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(name)
    return fd


def walk(folder_fd: int, *, limit: int) -> Iterator[Found]:
    """Every entry below the folder, depth first, each folder's entries by name; folders are
    entered through their own descriptor (never a link). hermes' temporary files (a write
    under way, `TEMP_PREFIX`) are left out. `TooManyEntries` past `limit` entries."""
    seen = 0
    stack: list[tuple[str, int]] = [("", os.dup(folder_fd))]
    try:
        while stack:
            prefix, fd = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    names = sorted(entry.name for entry in entries)
                children: list[tuple[str, int]] = []
                for name in names:
                    if name.startswith(TEMP_PREFIX):
                        continue
                    seen += 1
                    if seen > limit:
                        raise TooManyEntries(f"more than {limit:,} files and folders")
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # gone meanwhile
                    found = Found(prefix + name, name, fd, info)
                    yield found
                    if found.kind == DIR:
                        with contextlib.suppress(OSError):  # gone, or swapped for a link
                            children.append((found.path + "/", open_dir(fd, name)))
                stack.extend(reversed(children))
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)


def remove_at(parent_fd: int, name: str) -> None:
    """Remove the entry `name` (a folder with everything in it); a link is unlinked, never
    followed. Gone already is fine."""
    try:
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent_fd)
        return
    fd = open_dir(parent_fd, name)
    try:
        if info.st_mode & 0o700 != 0o700:  # a read-only folder's entries cannot be unlinked
            os.fchmod(fd, 0o700)
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            remove_at(fd, child)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


class Folders:
    """Descriptors of a folder and of the folders below it, opened component by component
    without following links, kept until `close` (a restore writes many files per folder)."""

    def __init__(self, folder_fd: int) -> None:
        self._fds: dict[str, int] = {"": folder_fd}

    def fd(self, path: str) -> int:
        """The descriptor of the folder `path` ("" the top); OSError when a part of it is a
        link or no folder."""
        if path in self._fds:
            return self._fds[path]
        parent, _, name = path.rpartition("/")
        fd = open_dir(self.fd(parent), name)
        self._fds[path] = fd
        return fd

    def forget(self, path: str) -> None:
        """`path` and the folders below it were removed: their descriptors go."""
        for known in [p for p in self._fds if p == path or p.startswith(path + "/")]:
            if known:
                os.close(self._fds.pop(known))

    def close(self) -> None:
        for path, fd in self._fds.items():
            if path:
                os.close(fd)
        self._fds = {"": self._fds[""]}


def split(path: str) -> tuple[str, str]:
    """`("a/b", "c.txt")` for "a/b/c.txt"; `("", name)` at the top."""
    parent, _, name = path.rpartition("/")
    return parent, name
