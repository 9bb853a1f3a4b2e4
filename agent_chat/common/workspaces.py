"""Where a conversation's workspace lives, shared by the bridge (the agent's tools work
there) and the app (the workspace panel and downloads read it; a message's attachments are
copied into its `attachments/` folder).

One folder per conversation, named by the session's UUID, under one root
(`AGENT_CHAT_WORKSPACES_DIR`, default `data/workspaces`). Both processes must see the same
root: today that means one machine (or one shared volume).
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import shutil
import stat
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = PROJECT_ROOT / "data" / "workspaces"
# A session UUID as the app makes them; anything else never names a folder.
_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# Below the root, beside the conversations' folders: each conversation's sandbox home
# (bridge/sandbox.py), never listed as a conversation (not a uuid).
SANDBOX_DIR = ".sandbox"
# Beside them too: the pictures MCP tools returned in each conversation (common/tool_images.py).
TOOL_IMAGES_DIR = ".tool-images"


def workspaces_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = env.get("AGENT_CHAT_WORKSPACES_DIR", "").strip()
    return (Path(raw).expanduser() if raw else DEFAULT_ROOT).resolve()


def workspace_dir(root: Path, session_uuid: str) -> Path:
    """The conversation's folder (not created here); ValueError for a malformed id."""
    if not _SESSION_ID.match(session_uuid or ""):
        raise ValueError(f"not a conversation id: {session_uuid!r}")
    return root / session_uuid


def ensure_workspace(root: Path, session_uuid: str) -> Path:
    folder = workspace_dir(root, session_uuid)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder.resolve()


def remove_workspace(root: Path, session_uuid: str) -> bool:
    """Delete a deleted conversation's folder and everything in it, its commands' sandbox
    home (`SANDBOX_DIR`) and its tools' pictures (`TOOL_IMAGES_DIR`); False if it had no
    folder. A symlink is unlinked, never followed."""
    try:
        folder = workspace_dir(root, session_uuid)
    except ValueError:
        return False
    _remove(root / SANDBOX_DIR / folder.name)
    _remove(root / TOOL_IMAGES_DIR / folder.name)
    return _remove(folder)


def _remove(path: Path) -> bool:
    if path.is_symlink():
        path.unlink()
        return True
    if not path.is_dir():
        return False
    shutil.rmtree(path)
    return True


def inside(folder: Path, candidate: Path) -> bool:
    """True when `candidate`, with every symlink followed, is `folder` or below it."""
    try:
        candidate.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def resolve_inside(root: Path, session_uuid: str, relative: str) -> Path | None:
    """The file `relative` names in the conversation's workspace, or None when it is
    malformed, absolute, or leads outside (`..`, a symlink out)."""
    try:
        folder = workspace_dir(root, session_uuid)
    except ValueError:
        return None
    if not relative or "\x00" in relative or Path(relative).is_absolute():
        return None
    target = folder / relative
    return target if inside(folder, target) else None


# ---- reading a workspace (the app's panel and downloads) ---------------------------------

MAX_LISTED = 500  # files listed in the panel; the rest are counted
MAX_VISITED = 20_000  # entries one listing looks at, at most
# Folders whose insides are tools' caches, not the agent's work: listed as skipped.
SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".cache"})
# hermes writes a file through a temporary one beside it, renamed over it when complete
# (tools/file_operations.py): never a file of the user's, and gone a moment later.
TEMP_PREFIX = ".hermes-tmp."
PREVIEW_BYTES = 256 * 1024  # of a text file read for the preview
IMAGE_PREVIEW_BYTES = 8 * 1024 * 1024
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}  # raster only: an SVG can carry script, so it previews as text
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the workspace, "/"-separated
    size: int
    modified: float  # st_mtime


@dataclass(frozen=True)
class Listing:
    files: tuple[FileEntry, ...] = ()
    more: int = 0  # files past MAX_LISTED, not listed
    skipped: tuple[str, ...] = ()  # folders not walked (SKIPPED_DIRS)
    exists: bool = False  # the folder exists
    complete: bool = True  # False: the walk stopped at MAX_VISITED (`more` is a lower bound)


def list_files(
    root: Path, session_uuid: str, limit: int = MAX_LISTED, max_visited: int = MAX_VISITED
) -> Listing:
    """The workspace's regular files, sorted by path, shallow ones first when there are more
    than `limit`. Symlinks are listed only when they lead to a file inside; folders are walked
    without following links; past `max_visited` entries the walk stops (a cloned repository
    must not cost a second per refresh) and `complete` is False."""
    try:
        folder = workspace_dir(root, session_uuid)
    except ValueError:
        return Listing()
    if not folder.is_dir() or folder.is_symlink():
        return Listing()
    base = folder.resolve()
    found: list[FileEntry] = []
    skipped: list[str] = []
    more = visited = 0
    pending = deque([base])
    while pending:
        current = pending.popleft()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            visited += 1
            if visited > max_visited:
                return Listing(
                    tuple(sorted(found, key=lambda f: f.path)), more, tuple(sorted(skipped)),
                    exists=True, complete=False,
                )  # fmt: skip
            relative = Path(entry.path).relative_to(base).as_posix()
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in SKIPPED_DIRS:
                        skipped.append(relative)
                    else:
                        pending.append(Path(entry.path))
                    continue
                if entry.is_symlink() and not inside(base, Path(entry.path)):
                    continue
                if not entry.is_file(follow_symlinks=True) or entry.name.startswith(TEMP_PREFIX):
                    continue
                if len(found) >= limit:
                    more += 1
                    continue
                info = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            found.append(FileEntry(relative, info.st_size, info.st_mtime))
    found.sort(key=lambda f: f.path)
    return Listing(tuple(found), more, tuple(sorted(skipped)), exists=True)


def open_inside(root: Path, session_uuid: str, relative: str) -> tuple[int, os.stat_result]:
    """An open file descriptor (read-only) and its stat for the regular file `relative` of
    the workspace; FileNotFoundError for anything else (malformed, outside, a link out, a
    folder, a device or pipe). The caller closes the descriptor."""
    target = resolve_inside(root, session_uuid, relative)
    if target is None:
        raise FileNotFoundError(relative)
    real = target.resolve()
    try:
        # O_NOFOLLOW on the resolved path: a link swapped in after the check is refused;
        # O_NONBLOCK: a pipe never blocks the open.
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise FileNotFoundError(relative) from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or not inside(workspace_dir(root, session_uuid), real):
        os.close(fd)
        raise FileNotFoundError(relative)
    return fd, info


@dataclass(frozen=True)
class Preview:
    path: str
    kind: str  # text | markdown | image | binary | empty | large (an image too big to show)
    text: str = ""  # text and markdown, at most PREVIEW_BYTES of the file
    size: int = 0
    modified: float = 0.0
    truncated: bool = False  # the file is longer than the text
    media_type: str = ""


def _is_binary(head: bytes) -> bool:
    """NUL bytes, or mostly bytes that are not UTF-8 (a Latin-1 text still previews, with
    its odd characters replaced)."""
    sample = head[:8192]
    if b"\x00" in sample:
        return True
    decoded = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(sample)
    return decoded.count("\ufffd") > max(len(decoded) // 10, 2)


def read_preview(
    root: Path, session_uuid: str, relative: str, cap: int = PREVIEW_BYTES
) -> Preview | None:
    """What the panel shows of one file, or None when it is not a file of this workspace."""
    try:
        fd, info = open_inside(root, session_uuid, relative)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        suffix = Path(relative).suffix.lower()
        common = {"path": relative, "size": info.st_size, "modified": info.st_mtime}
        if suffix in IMAGE_TYPES:
            kind = "image" if info.st_size <= IMAGE_PREVIEW_BYTES else "large"
            return Preview(kind=kind, media_type=IMAGE_TYPES[suffix], **common)
        if info.st_size == 0:
            return Preview(kind="empty", **common)
        head = handle.read(cap)
    if _is_binary(head):
        return Preview(kind="binary", **common)
    truncated = info.st_size > len(head)
    # A character cut at the cap is left out rather than shown as a replacement mark.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head, final=not truncated)
    kind = "markdown" if suffix in MARKDOWN_SUFFIXES else "text"
    return Preview(kind=kind, text=text, truncated=truncated, **common)


# ---- writing into a workspace (a message's attachments, services/attachment_workspace.py) --

NAME_BYTES = 255  # a file name's limit on Linux filesystems, in bytes


def numbered(name: str, n: int) -> str:
    """`name` itself for n == 1, else "stem (n).ext"; shortened (never the extension) to
    NAME_BYTES of UTF-8, which 255 characters of another script can exceed."""
    dot = name.rfind(".")
    stem, ext = (name[:dot], name[dot:]) if dot > 0 else (name, "")
    tail = (f" ({n})" if n > 1 else "") + ext
    while stem and len((stem + tail).encode()) > NAME_BYTES:
        stem = stem[:-1]
    return (stem.rstrip() or "file") + tail


def open_subfolder(root: Path, session_uuid: str, sub: str) -> tuple[Path, int]:
    """The workspace's folder `sub` (made with the workspace if missing) and a descriptor of
    it, for calls relative to it (`dir_fd=`): a plain name written through it stays in it.
    OSError when `sub` is a link or leads outside the workspace. The caller closes it."""
    folder = ensure_workspace(root, session_uuid)
    path = folder / sub
    path.mkdir(mode=0o700, exist_ok=True)
    if path.is_symlink() or not inside(folder, path):
        raise NotADirectoryError(errno.ENOTDIR, f"{sub}/ is not a folder of the workspace")
    # O_NOFOLLOW: a link swapped in after the check is refused.
    return path, os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)


def holds(dir_fd: int, name: str, size: int, digest: str) -> bool | None:
    """Whether the file `name` below `dir_fd` has exactly these bytes (`digest`: their
    SHA-256, hex); None when the name is free. A link or anything not a regular file is
    taken, never followed."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size != size:
        return False
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest() == digest


def place(dir_fd: int, temp: str, name: str) -> bool:
    """Give the complete file `temp` the name `name` (both below `dir_fd`) unless that is
    taken meanwhile (False). A hard link never replaces a file; where the filesystem has
    none, a rename after a check."""
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        try:
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return True
        return False
    return True


def free_bytes(dir_fd: int) -> int:
    """What an unprivileged writer may still write on the folder's filesystem."""
    info = os.fstatvfs(dir_fd)
    return info.f_bavail * info.f_frsize
