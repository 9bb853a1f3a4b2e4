"""Where a conversation's workspace checkpoints are kept, and how (docs/architecture.md,
"Workspace checkpoints").

Beside the conversations' folders, one store per conversation, so every process that sees
the folders (the app's workers, the bridges) sees its checkpoints, and deleting the
conversation deletes them:

    <workspaces root>/.checkpoints/<session uuid>/
        objects/ab/cdef…       a file's bytes, named by their SHA-256 (stored once)
        manifests/<name>.json  a checkpoint: path -> file (sha256, mode, size) | folder | link
        HEAD                   the checkpoint the folder was last recorded or restored as
        index.json             a stat cache: files unchanged since they were hashed are
                               not read again (size, mtime, ctime, inode)
        tmp/                   files being written; renamed into place once complete

A manifest is whole, or a delta: the entries that differ from its `base` (the HEAD when it
was recorded) and the paths gone since, so a checkpoint where one file changed adds that
file's bytes and a few hundred bytes of manifest. A chain is at most `MAX_DEPTH` deltas
long, then a whole one is written. Everything is written to `tmp/` and renamed
(`os.replace`): a crash leaves the previous state, never half a checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_chat.common.checkpoint_files import DIR, FILE, LINK
from agent_chat.common.workspaces import workspace_dir

STORE_DIR = ".checkpoints"  # below the workspaces root; not a uuid, so never a conversation
FORMAT = 1
MAX_DEPTH = 16  # deltas in a chain before a whole manifest
TMP_MAX_AGE_S = 3600  # a temporary file older than this was left by a crash: swept
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class BadCheckpoint(Exception):
    """A manifest that cannot be read or does not hold what a manifest holds."""


@dataclass(frozen=True)
class Entry:
    """One path of a checkpoint. `sha256` and `size` for a file (`stored`: its bytes are in
    the store; False for a file over the size limit, recorded but not restorable), `target`
    for a link; `mode` the permission bits of a file or folder."""

    kind: str  # FILE, DIR or LINK
    mode: int = 0
    size: int = 0
    sha256: str = ""
    stored: bool = True
    target: str = ""

    def as_json(self) -> dict[str, Any]:
        if self.kind == DIR:
            return {"type": DIR, "mode": self.mode}
        if self.kind == LINK:
            return {"type": LINK, "target": self.target}
        out = {"type": FILE, "mode": self.mode, "size": self.size, "sha256": self.sha256}
        return out if self.stored else {**out, "stored": False}


Manifest = dict[str, Entry]  # path ("/"-separated, relative to the folder) -> entry


def valid_path(path: Any) -> bool:
    """A relative path of plain names: no "", ".", "..", NUL or leading "/"."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _entry(raw: Any) -> Entry:
    if not isinstance(raw, dict):
        raise BadCheckpoint("an entry is not an object")
    kind = raw.get("type")
    if kind == DIR:
        return Entry(DIR, mode=_mode(raw.get("mode")))
    if kind == LINK:
        target = raw.get("target")
        if not isinstance(target, str) or not target or "\x00" in target:
            raise BadCheckpoint("a link without a target")
        return Entry(LINK, target=target)
    if kind == FILE:
        sha, size = raw.get("sha256"), raw.get("size")
        if not isinstance(sha, str) or not _SHA256.match(sha):
            raise BadCheckpoint("a file without its SHA-256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise BadCheckpoint("a file without its size")
        stored = raw.get("stored", True) is not False
        return Entry(FILE, mode=_mode(raw.get("mode")), size=size, sha256=sha, stored=stored)
    raise BadCheckpoint(f"an entry of an unknown type {kind!r}")


def _mode(raw: Any) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 0o777:
        raise BadCheckpoint("a mode that is not permission bits")
    return raw


@dataclass(frozen=True)
class Cached:
    """What a file's stat was when its bytes were hashed (index.json)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    sha256: str
    hashed_ns: int  # time.time_ns() when hashed

    def holds(self, info: os.stat_result) -> bool:
        """The file is as it was hashed: same size, times and inode, and its times lie far
        enough before the hashing that a write after it changed them ("racily clean"
        entries, as git calls them, are read again). Timestamps in whole seconds (an old
        filesystem's) need two seconds; others 100 ms, ten times a coarse kernel clock's
        tick."""
        if (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino) != (
            self.size,
            self.mtime_ns,
            self.ctime_ns,
            self.ino,
        ):
            return False
        margin = 2_000_000_000 if self.mtime_ns % 1_000_000_000 == 0 else 100_000_000
        return max(self.mtime_ns, self.ctime_ns) < self.hashed_ns - margin


class Store:
    """One conversation's checkpoints (`store_of`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def objects(self) -> Path:
        return self.path / "objects"

    def exists(self) -> bool:
        return (self.path / "manifests").is_dir()

    def ensure(self) -> None:
        for sub in ("objects", "manifests", "tmp"):
            (self.path / sub).mkdir(parents=True, exist_ok=True, mode=0o700)

    def object_path(self, sha256: str) -> Path:
        return self.objects / sha256[:2] / sha256[2:]

    def has_object(self, sha256: str) -> bool:
        return self.object_path(sha256).is_file()

    # ---- writing: a temporary file, then a rename ----------------------------------------

    def temp(self) -> tuple[int, Path]:
        """A new file in `tmp/`, open for writing, and its path."""
        path = self.path / "tmp" / secrets.token_hex(12)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path

    def add_object(self, temp: Path, sha256: str) -> bool:
        """The complete file `temp` becomes the object of `sha256` (False: it was there
        already, from this or another writer: the same bytes, kept)."""
        target = self.object_path(sha256)
        if target.is_file():
            temp.unlink()
            return False
        target.parent.mkdir(exist_ok=True, mode=0o700)
        os.replace(temp, target)
        return True

    def _write(self, path: Path, data: bytes, *, durable: bool = False) -> None:
        """`data` as the file `path`, whole or not at all. `durable`: on the disk before
        the rename (a manifest; HEAD and the index only make the next checkpoint cheaper)."""
        fd, temp = self.temp()
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
            raise

    def sweep_temp(self) -> None:
        """Temporary files a crash left (older than an hour: a writer still at work is not)."""
        cutoff = time.time() - TMP_MAX_AGE_S
        with contextlib.suppress(FileNotFoundError), os.scandir(self.path / "tmp") as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)

    # ---- manifests ---------------------------------------------------------------------

    def manifest_path(self, name: str) -> Path:
        if not _NAME.match(name or ""):
            raise ValueError(f"not a checkpoint name: {name!r}")
        return self.path / "manifests" / f"{name}.json"

    def has(self, name: str) -> bool:
        return self.manifest_path(name).is_file()

    def save(self, name: str, manifest: Manifest, *, base: str | None = None) -> int:
        """Record `manifest` as checkpoint `name`: a delta on `base` when that is shorter
        than the whole; its size in bytes. Checkpoints never change once recorded (a later
        delta may lean on one): `record` does not record a name twice, and a delta never
        leans on a chain through its own name."""
        body = self._delta(manifest, base, name) if base and base != name else None
        if body is None:
            body = {"base": None, "depth": 0, "entries": _entries(manifest), "removed": []}
        data = json.dumps(
            {"format": FORMAT, "name": name, "recorded_at": time.time(), **body},
            separators=(",", ":"),
            sort_keys=True,
        ).encode()
        self._write(self.manifest_path(name), data, durable=True)
        return len(data)

    def _delta(self, manifest: Manifest, base: str, name: str) -> dict[str, Any] | None:
        try:
            chain = self._chain(base)
        except (OSError, BadCheckpoint, ValueError):
            return None  # no usable base: a whole manifest
        if chain is None or len(chain) >= MAX_DEPTH or any(r["name"] == name for r in chain):
            return None
        old = _applied(chain)
        changed = {p: e for p, e in manifest.items() if old.get(p) != e}
        removed = sorted(p for p in old if p not in manifest)
        if len(changed) + len(removed) > max(len(manifest) // 2, 8):
            return None  # mostly new: a whole manifest is as short and reads faster
        depth = len(chain)
        return {"base": base, "depth": depth, "entries": _entries(changed), "removed": removed}

    def _raw(self, name: str) -> dict[str, Any]:
        try:
            raw = json.loads(self.manifest_path(name).read_bytes())
        except FileNotFoundError:
            raise
        except (OSError, ValueError) as exc:
            raise BadCheckpoint(f"checkpoint {name} cannot be read: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise BadCheckpoint(f"checkpoint {name} is not of format {FORMAT}")
        return raw

    def load(self, name: str) -> Manifest | None:
        """Checkpoint `name` as a whole (its chain of deltas applied); None when there is
        no such checkpoint; `BadCheckpoint` when it or a base cannot be read."""
        chain = self._chain(name)
        return None if chain is None else _applied(chain)

    def _chain(self, name: str) -> list[dict[str, Any]] | None:
        """The manifests from `name` down to its whole one (None: no checkpoint `name`)."""
        chain: list[dict[str, Any]] = []
        current: str | None = name
        while current is not None:
            if len(chain) > MAX_DEPTH or any(r.get("name") == current for r in chain):
                raise BadCheckpoint(f"checkpoint {name} has a broken chain of bases")
            try:
                raw = self._raw(current)
            except FileNotFoundError:
                if current == name:
                    return None
                raise BadCheckpoint(f"checkpoint {name} lost its base {current}") from None
            chain.append({**raw, "name": current})
            base = raw.get("base")
            if base is not None and not isinstance(base, str):
                raise BadCheckpoint(f"checkpoint {current} names no base")
            current = base
        return chain

    # ---- HEAD and the stat cache -------------------------------------------------------

    def head(self) -> str | None:
        try:
            name = (self.path / "HEAD").read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return name if _NAME.match(name) else None

    def set_head(self, name: str) -> None:
        self._write(self.path / "HEAD", name.encode("ascii"))

    def read_index(self) -> dict[str, Cached]:
        try:
            raw = json.loads((self.path / "index.json").read_bytes())
            return {path: Cached(*fields) for path, fields in raw["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}  # a cache: lost, every file is read once more

    def write_index(self, index: dict[str, Cached]) -> None:
        files = {
            path: [c.size, c.mtime_ns, c.ctime_ns, c.ino, c.sha256, c.hashed_ns]
            for path, c in index.items()
        }
        data = json.dumps({"format": FORMAT, "files": files}, separators=(",", ":")).encode()
        self._write(self.path / "index.json", data)


def _applied(chain: list[dict[str, Any]]) -> Manifest:
    """A chain of manifests (newest first) as one, each path checked to stay inside."""
    manifest: Manifest = {}
    for raw in reversed(chain):
        entries, removed = raw.get("entries"), raw.get("removed", [])
        if not isinstance(entries, dict) or not isinstance(removed, list):
            raise BadCheckpoint(f"checkpoint {raw['name']} holds no entries")
        for path in removed:
            manifest.pop(path, None)
        for path, entry in entries.items():
            if not valid_path(path):
                raise BadCheckpoint(f"a path that leads out: {path!r}")
            manifest[path] = _entry(entry)
    return manifest


def parse_entries(raw: Any) -> Manifest:
    """A manifest's entries as written by `entries_json` (an export carries them), each
    path checked to stay inside; `BadCheckpoint` otherwise."""
    if not isinstance(raw, dict):
        raise BadCheckpoint("a checkpoint's entries are not an object")
    manifest: Manifest = {}
    for path, entry in raw.items():
        if not valid_path(path):
            raise BadCheckpoint(f"a path that leads out: {path!r}")
        manifest[path] = _entry(entry)
    return manifest


def entries_json(manifest: Manifest) -> dict[str, Any]:
    return _entries(manifest)


def _entries(manifest: Manifest) -> dict[str, Any]:
    return {path: entry.as_json() for path, entry in sorted(manifest.items())}


def store_of(root: Path, session_uuid: str) -> Store:
    """The conversation's store (not created here); ValueError for a malformed id."""
    return Store(workspace_dir(root / STORE_DIR, session_uuid))


def remove_store(root: Path, session_uuid: str) -> bool:
    """A deleted conversation's checkpoints go with it; False if it had none."""
    try:
        path = store_of(root, session_uuid).path
    except ValueError:
        return False
    if path.is_symlink():
        path.unlink()
        return True
    if not path.is_dir():
        return False
    shutil.rmtree(path)
    return True
