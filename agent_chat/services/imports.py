"""Importing a conversation from an export file: what the page (state/importer.py) and
`POST /api/chat/sessions/import` both call. The file is read and checked in `export/`
(`ImportRefused`, nothing written), its files' bytes stored again for the importing person
through the upload use case (`services/attachments.upload`: their own rows, deduplicated
per owner, bytes and name; the upload's limit and refusals), then everything is written in
one transaction (`db/imports.py`).

A file the upload refuses (a program, over the size limit, empty) and a file the export did
not carry are named in their message instead (`export/import_files.py`); the import goes on.
Should the write fail after the files were stored, they are attachments no message uses,
which the hourly sweep deletes (`services/attachment_sweep.py`): never deleted here, as an
upload of a file the person already had returns their existing row.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from agent_chat.common.workspaces import workspaces_root
from agent_chat.db import messages as message_store
from agent_chat.db.attachment_models import CHUNK_BYTES
from agent_chat.db.import_plan import ImportPlan, MessagePlan
from agent_chat.db.imports import Imported, import_conversation
from agent_chat.export import import_files
from agent_chat.export.checkpoint_data import WorkspacePlan, read_checkpoints, write_checkpoints
from agent_chat.export.importing import read_export
from agent_chat.services import workspace_versions
from agent_chat.services.attachments import UploadRefused, upload
from agent_chat.services.backend import Backend

log = logging.getLogger(__name__)


async def _pieces(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), CHUNK_BYTES):
        yield data[start : start + CHUNK_BYTES]


async def _store_files(
    svc: Backend, *, user_id: int, message: MessagePlan, notes: set[str]
) -> tuple[MessagePlan, list[int]]:
    """The message with note lines for the files not stored, and the stored files' ids in
    the message's order."""
    ids: list[int] = []
    lines: list[str] = []
    for file in message.files:
        if file.data is None:
            lines.append(import_files.not_included_line(file.name))
            notes.add(import_files.NOT_INCLUDED)
            continue
        try:
            row = await upload(svc, user_id=user_id, name=file.name, chunks=_pieces(file.data))
        except UploadRefused as exc:
            lines.append(import_files.refused_line(file.name, exc.message))
            notes.add(import_files.REFUSED)
            continue
        ids.append(row.id or 0)
    # The bytes are stored now: the plan keeps none of them while the rows are written.
    kept = replace(message, content=import_files.with_lines(message.content, lines), files=[])
    return kept, ids


async def _with_files(
    svc: Backend, *, user_id: int, plan: ImportPlan
) -> tuple[ImportPlan, dict[int, list[int]]]:
    """The plan with its files stored (or named), and each message's attachment ids."""
    if not any(m.files for m in plan.messages):
        return plan, {}
    notes = set(plan.notes)
    links: dict[int, list[int]] = {}
    messages: list[MessagePlan] = []
    for message in plan.messages:
        if message.files:
            message, links[message.source_id] = await _store_files(
                svc, user_id=user_id, message=message, notes=notes
            )
        messages.append(message)
    return replace(plan, messages=messages, notes=sorted(notes)), links


async def import_export(svc: Backend, *, user_id: int, raw: bytes | str) -> Imported:
    """The file as a new conversation of `user_id`'s (`branch=all` keeps every version),
    its messages' files included (see the module doc)."""
    plan = await asyncio.to_thread(read_export, raw)  # up to MAX_IMPORT_BYTES: off the loop
    workspace = await asyncio.to_thread(_workspace_plan, raw)
    sources = [m.source_id for m in plan.messages]
    plan, links = await _with_files(svc, user_id=user_id, plan=plan)
    done = await svc.storage.call(
        import_conversation, plan=plan, user_id=user_id, attachments=links
    )
    if workspace is not None and workspace.checkpoints:
        await _restore_workspace(svc, done, sources, workspace)
    return done


def _workspace_plan(raw: bytes | str) -> WorkspacePlan | None:
    """The export's workspace checkpoints, checked (`read_export` accepted the file: it is
    JSON); a file without any is not parsed twice."""
    if (b'"workspace"' if isinstance(raw, bytes) else '"workspace"') not in raw:
        return None
    return read_checkpoints(json.loads(raw))


def _new_ids(*, session: Any, chat_session_id: int, sources: list[int]) -> dict[int, int]:
    """Exported message id -> imported: `import_conversation` gives the messages ascending
    ids in the file's order."""
    rows = message_store.message_ids(session=session, chat_session_id=chat_session_id)
    return dict(zip(sources, rows, strict=True)) if len(rows) == len(sources) else {}


async def _restore_workspace(
    svc: Backend, done: Imported, sources: list[int], workspace: WorkspacePlan
) -> None:
    """The checkpoints under the new answers' ids, and the folder as the shown branch's
    last Workspace answer left it (a failure is logged: the conversation is imported)."""
    chat = done.chat
    try:
        new_ids = await svc.storage.call(_new_ids, chat_session_id=chat.id, sources=sources)
        root = workspaces_root()
        await asyncio.to_thread(write_checkpoints, root, chat.session_uuid, workspace, new_ids)
        await workspace_versions.follow_branch(
            svc.storage, chat_session_id=chat.id, session_uuid=chat.session_uuid, root=root
        )
    except (OSError, ValueError) as exc:
        log.warning("Imported %s without its workspace: %r", chat.session_uuid, exc)
