"""The workspace checkpoints of a JSON export "with files" (common/checkpoints.py), and
putting them back on import (services/imports.py).

The export's `workspace` holds `checkpoints`, each answer's manifest by the exported answer's
id (`<id>`, and `<id>-undone` after an undo), and `objects`: the bytes (base64) of the files
they name, each once. Within what the attached files left of the export's files limit
(`file_data.FILES_LIMIT_BYTES`), in the document's order: a checkpoint whose new bytes do not
fit is left out whole and listed (`left_out`), never cut. An import checks every manifest
(paths stay inside, kinds and hashes well formed) and every object's SHA-256, refusing the
export when one is not what it says; a checkpoint naming bytes the export lacks is left out.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_chat.common.checkpoint_files import FILE
from agent_chat.common.checkpoint_store import (
    BadCheckpoint,
    Manifest,
    Store,
    entries_json,
    parse_entries,
    store_of,
)
from agent_chat.common.checkpoints import UNDONE
from agent_chat.db.import_plan import ImportRefused
from agent_chat.export.file_data import FileData
from agent_chat.export.reading import SessionExport

_NAME = re.compile(rf"^([1-9][0-9]{{0,17}})({re.escape(UNDONE)})?$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def workspace_of(root: Path, data: SessionExport, files: FileData) -> dict[str, Any] | None:
    """The `workspace` of a "with files" export of `data`: its answers' checkpoints within
    what its attached files left of the limit."""
    used = sum(len(encoded) * 3 // 4 for encoded in files.data.values())
    answers = [m.id for m in data.messages if m.id is not None and m.role == "ASSISTANT"]
    return gather_checkpoints(
        root, data.chat.session_uuid, answers, limit=max(files.limit_bytes - used, 0)
    )


def gather_checkpoints(
    root: Path, session_uuid: str, answer_ids: list[int], *, limit: int
) -> dict[str, Any] | None:
    """The export's `workspace` (None: the conversation never recorded a checkpoint)."""
    store = store_of(root, session_uuid)
    if not store.exists():
        return None
    checkpoints: dict[str, Any] = {}
    objects: dict[str, str] = {}
    left_out: list[dict[str, str]] = []
    total = 0
    for answer_id in answer_ids:
        for name in (str(answer_id), f"{answer_id}{UNDONE}"):
            try:
                manifest = store.load(name)
            except (OSError, BadCheckpoint) as exc:
                left_out.append({"checkpoint": name, "why": f"it cannot be read ({exc})"})
                continue
            if manifest is None:
                continue
            new = _new_objects(manifest, objects)
            cost = sum(new.values())
            if total + cost > limit:
                left_out.append({"checkpoint": name, "why": "over the export's limit for files"})
                continue
            try:
                read = {sha: _read(store, sha, size) for sha, size in new.items()}
            except (OSError, ValueError):
                left_out.append({"checkpoint": name, "why": "its stored bytes are damaged"})
                continue
            objects.update(read)
            total += cost
            checkpoints[name] = entries_json(manifest)
    return {"checkpoints": checkpoints, "objects": objects, "left_out": left_out}


def _new_objects(manifest: Manifest, have: dict[str, str]) -> dict[str, int]:
    return {
        e.sha256: e.size
        for e in manifest.values()
        if e.kind == FILE and e.stored and e.sha256 not in have
    }


def _read(store: Store, sha256: str, size: int) -> str:
    data = store.object_path(sha256).read_bytes()
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError("damaged object")
    return base64.b64encode(data).decode("ascii")


# ---- import --------------------------------------------------------------------------------


@dataclass
class WorkspacePlan:
    """Checkpoints by the exported answer's id (and whether undone), and the bytes."""

    checkpoints: dict[tuple[int, bool], Manifest] = field(default_factory=dict)
    objects: dict[str, bytes] = field(default_factory=dict)


def read_checkpoints(doc: Any) -> WorkspacePlan | None:
    """The export's `workspace`, checked (`ImportRefused` naming where); None without one."""
    raw = doc.get("workspace") if isinstance(doc, dict) else None
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ImportRefused("workspace must be an object.")
    listed, objects = raw.get("checkpoints", {}), raw.get("objects", {})
    if not isinstance(listed, dict) or not isinstance(objects, dict):
        raise ImportRefused("workspace.checkpoints and workspace.objects must be objects.")
    plan = WorkspacePlan()
    for sha, data in objects.items():
        if not isinstance(sha, str) or not _SHA256.match(sha) or not isinstance(data, str):
            raise ImportRefused("workspace.objects maps SHA-256 names to base64 text.")
        try:
            raw_bytes = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ImportRefused(f"workspace.objects.{sha} is not valid base64.") from exc
        if hashlib.sha256(raw_bytes).hexdigest() != sha:
            raise ImportRefused(f"workspace.objects.{sha} is not the bytes it names.")
        plan.objects[sha] = raw_bytes
    for name, entries in listed.items():
        found = _NAME.match(name) if isinstance(name, str) else None
        if found is None:
            raise ImportRefused(f"workspace.checkpoints has a name that is no answer's: {name!r}.")
        try:
            manifest = parse_entries(entries)
        except BadCheckpoint as exc:
            raise ImportRefused(f"workspace.checkpoints.{name}: {exc}.") from exc
        plan.checkpoints[(int(found.group(1)), found.group(2) is not None)] = manifest
    return plan


def write_checkpoints(
    root: Path, session_uuid: str, plan: WorkspacePlan, new_ids: dict[int, int]
) -> int:
    """The plan's checkpoints in the new conversation's store, named by the new answers'
    ids (`new_ids`: exported id -> new id; others dropped); how many were written. One
    naming bytes the export lacks is dropped."""
    store = store_of(root, session_uuid)
    store.ensure()
    written = 0
    for (old_id, undone), manifest in sorted(plan.checkpoints.items()):
        new_id = new_ids.get(old_id)
        needed = {e.sha256 for e in manifest.values() if e.kind == FILE and e.stored}
        if new_id is None or not needed <= (plan.objects.keys() | _held(store, needed)):
            continue
        for sha in needed:
            if not store.has_object(sha):
                fd, temp = store.temp()
                with open(fd, "wb") as handle:
                    handle.write(plan.objects[sha])
                store.add_object(temp, sha)
        name = f"{new_id}{UNDONE if undone else ''}"
        if not store.has(name):
            store.save(name, manifest)
            written += 1
    return written


def _held(store: Store, shas: set[str]) -> set[str]:
    return {sha for sha in shas if store.has_object(sha)}
