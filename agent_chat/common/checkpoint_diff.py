"""What an answer changed in its workspace: two checkpoints compared (common/checkpoints.py).

The entries are compared by their manifests (no file of the folder is read): a file whose
SHA-256, mode or kind differs is changed, a path only in the newer is added, one only in
the older deleted. Folders are not listed (a new folder shows as its files). A text file
changed, added or deleted is shown as a unified diff, read from the store's objects and
limited in size (`MAX_TEXT_BYTES` a side, `MAX_DIFF_LINES` a file, `MAX_DIFF_TOTAL` in
all: past them a file is listed by size, `truncated`); a binary file by its sizes.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from agent_chat.common.checkpoint_files import DIR, FILE, LINK
from agent_chat.common.checkpoint_store import Entry, Manifest, Store

ADDED, CHANGED, DELETED = "added", "changed", "deleted"
MAX_TEXT_BYTES = 256 * 1024  # a side of a text diff
MAX_DIFF_LINES = 400  # of one file's diff
MAX_DIFF_TOTAL = 200 * 1024  # characters of all diffs of one answer


@dataclass(frozen=True)
class Change:
    path: str
    change: str  # ADDED, CHANGED or DELETED
    kind: str  # "file" or "link" (the newer entry's; the older's for a deleted one)
    size_before: int | None = None  # a file's bytes (None: no file there)
    size_after: int | None = None
    binary: bool = False  # no text diff: not UTF-8 text, or not kept (over the size limit)
    diff: str = ""  # unified diff of a text file (or a link's target, before and after)
    truncated: bool = False  # the diff was cut at the limits


def _listed(manifest: Manifest) -> dict[str, Entry]:
    return {path: entry for path, entry in manifest.items() if entry.kind != DIR}


def _same(old: Entry, new: Entry) -> bool:
    if old.kind != new.kind:
        return False
    if old.kind == LINK:
        return old.target == new.target
    return (old.sha256, old.mode) == (new.sha256, new.mode)


def compare(old: Manifest, new: Manifest) -> list[tuple[str, str, Entry | None, Entry | None]]:
    """(path, change, old entry, new entry) of every file or link that differs, by path."""
    before, after = _listed(old), _listed(new)
    found: list[tuple[str, str, Entry | None, Entry | None]] = []
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path), after.get(path)
        if was is None:
            found.append((path, ADDED, None, now))
        elif now is None:
            found.append((path, DELETED, was, None))
        elif not _same(was, now):
            found.append((path, CHANGED, was, now))
    return found


def count(old: Manifest, new: Manifest) -> int:
    return len(compare(old, new))


def _text(store: Store, entry: Entry | None) -> list[str] | None:
    """A file's lines if it is UTF-8 text kept in the store and small enough; [] for none."""
    if entry is None:
        return []
    if entry.kind == LINK:
        return [f"-> {entry.target}\n"]
    if entry.kind != FILE or not entry.stored or entry.size > MAX_TEXT_BYTES:
        return None
    try:
        data = store.object_path(entry.sha256).read_bytes()
    except OSError:
        return None
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def changes(store: Store, old: Manifest, new: Manifest) -> list[Change]:
    """What changed from `old` to `new`, each text file with its diff (module's limits)."""
    out: list[Change] = []
    budget = MAX_DIFF_TOTAL
    for path, change, was, now in compare(old, new):
        entry = now or was
        assert entry is not None
        sizes = {
            "size_before": was.size if was is not None and was.kind == FILE else None,
            "size_after": now.size if now is not None and now.kind == FILE else None,
        }
        before = _text(store, was) if budget > 0 else None
        after = _text(store, now) if budget > 0 and before is not None else None
        if before is None or after is None:
            out.append(Change(path, change, entry.kind, binary=True, **sizes))
            continue
        lines = list(difflib.unified_diff(before, after, fromfile=f"a/{path}", tofile=f"b/{path}"))
        truncated = len(lines) > MAX_DIFF_LINES
        text = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines[:MAX_DIFF_LINES]
        )
        if len(text) > budget:
            text, truncated = text[:budget], True
        budget -= len(text)
        out.append(Change(path, change, entry.kind, diff=text, truncated=truncated, **sizes))
    return out
