"""The workspace follows the versions, first slice: each answer of a Workspace run has a
checkpoint of the conversation's folder as the run left it, and a regenerate or an edit
starts from the folder of the answer before it (docs/architecture.md, "Workspace
checkpoints"; the store: common/checkpoints.py).

- **Record**: every run whose answer has the Workspace profile, at its end whatever the
  outcome (succeeded, failed, stopped), before the outcome is stored: the answer is still
  RUNNING then, so no other run of the conversation changes the folder meanwhile. Named by
  the answer's id. A checkpoint that cannot be made (a full disk, too many files) is logged;
  the answer is stored all the same and has no checkpoint.
- **Restore**: a regenerate's or an edit's new turn, once stored and before its run starts,
  puts the folder back as the answer before the replaced question left it: the nearest
  Workspace answer above the question (answers of other profiles never touched the folder),
  or the empty folder when there is none (the first turn). Kept as they are: the files the
  new question carries (its attachments, copied into `attachments/` before the turn was
  stored: services/attachment_parts.py), found there by their size and SHA-256. Not
  restored, the folder left as it is: a conversation without any checkpoint (its folder
  predates them), and an answer above that has none (it predates them, or its record
  failed): what the folder held then is unknown, and guessing would delete work. A restore
  that fails fails the new answer with the reason; nothing is sent to the agent.
- **Delete**: services/conversations.py:remove_folder removes the store with the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from agent_chat.common.checkpoint_files import FILE, kind_of, open_dir, open_file, open_folder
from agent_chat.common.checkpoint_restore import CheckpointMissing, Restored, restore
from agent_chat.common.checkpoints import (
    BadCheckpoint,
    Recorded,
    TooManyEntries,
    current_name,
    has_store,
    record,
)
from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.common.workspaces import workspace_dir, workspaces_root
from agent_chat.db import messages
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.models import MessageRole
from agent_chat.db.turns import PreparedTurn, TurnMode, TurnPlan
from agent_chat.runs.consumer import ConsumedRun
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from agent_chat.services.attachment_workspace import ATTACHMENTS_DIR

log = logging.getLogger(__name__)

NOT_RESTORED = (
    "The workspace could not be put back as it was before this question ({reason}), so the "
    "agent was not started. Try again, or send the question as a new message."
)


class WorkspaceNotRestored(Exception):
    """A regenerate's or an edit's folder could not be put back; the sentence says why."""


def attach(runs: RunManager) -> None:
    """Record and restore around the manager's runs (services/runtime.py, before the runs
    re-attach: a run finishing after a restart records too)."""
    storage = runs.storage

    async def before_send(plan: TurnPlan, prepared: PreparedTurn) -> None:
        if plan.mode not in (TurnMode.REGENERATE, TurnMode.EDIT):
            return
        try:
            await restore_before(storage, session_uuid=plan.session_uuid, turn=prepared)
        except WorkspaceNotRestored:
            raise
        except Exception as exc:  # the answer shows these words: never an internal error's
            log.exception("Workspace %s not put back", plan.session_uuid)
            reason = "an unexpected error"
            raise WorkspaceNotRestored(NOT_RESTORED.format(reason=reason)) from exc

    async def before_finalise(live: ConsumedRun) -> None:
        await record_answer(storage, answer_id=live.message_id, session_uuid=live.session_uuid)

    runs.consumer.before_send = before_send
    runs.consumer.before_finalise = before_finalise


# ---- record --------------------------------------------------------------------------------


async def record_answer(
    storage: Storage, *, answer_id: int, session_uuid: str, root: Path | None = None
) -> Recorded | None:
    """The folder as the answer's checkpoint, if its run had the Workspace profile (None:
    not one, or it could not be recorded: logged)."""
    answer = await storage.call(messages.get_message, message_id=answer_id)
    if answer is None or not uses_workspace(answer.tool_profile or ""):
        return None
    root = workspaces_root() if root is None else root
    try:
        recorded = await asyncio.to_thread(record, root, session_uuid, str(answer_id))
    except (OSError, TooManyEntries, BadCheckpoint, ValueError) as exc:
        log.warning("No checkpoint of answer %s in %s: %s", answer_id, session_uuid, exc)
        return None
    if recorded.not_stored:
        log.info("Answer %s: files too big to restore: %s", answer_id, recorded.not_stored)
    log.debug("checkpoint of answer %s: %s", answer_id, recorded)
    return recorded


# ---- restore -------------------------------------------------------------------------------


async def restore_before(
    storage: Storage, *, session_uuid: str, turn: PreparedTurn, root: Path | None = None
) -> Restored | None:
    """Put the folder back as the answer before `turn`'s question left it (see the module's
    words); None when nothing was done. `WorkspaceNotRestored` when it failed."""
    if not uses_workspace(turn.tool_profile):
        return None
    root = workspaces_root() if root is None else root
    if not await asyncio.to_thread(has_store, root, session_uuid):
        return None  # no checkpoint ever: the folder predates them
    point, files = await storage.call(restore_point, question_id=turn.question_id)
    name = None
    if point is not None:  # its files as they stand (an undo of its changes is a checkpoint)
        name = await asyncio.to_thread(current_name, root, session_uuid, point)
        if name is None:
            log.info("Answer %s has no checkpoint: %s left as it is", point, session_uuid)
            return None
    wanted = {(row.size, row.sha256) for row in files}
    try:
        keep = await asyncio.to_thread(_attachments_holding, root, session_uuid, wanted)
        return await asyncio.to_thread(restore, root, session_uuid, name, keep=keep)
    except (OSError, BadCheckpoint, CheckpointMissing, TooManyEntries) as exc:
        log.warning("Workspace %s not put back to %s: %r", session_uuid, name, exc)
        raise WorkspaceNotRestored(NOT_RESTORED.format(reason=_reason(exc))) from exc


def restore_point(*, session: Any, question_id: int) -> tuple[int | None, list[Any]]:
    """The nearest Workspace answer above the question (None: none, the first turn) and
    the question's attachments."""
    question = messages.get_message(session=session, message_id=question_id)
    if question is None:
        return None, []
    files = message_attachments(session=session, message_ids=[question_id]).get(question_id, [])
    current = question.parent_id
    while current is not None:
        above = messages.get_message(session=session, message_id=current)
        if above is None:
            break
        if above.role == MessageRole.ASSISTANT.value and uses_workspace(above.tool_profile or ""):
            return above.id, files
        current = above.parent_id
    return None, files


def _attachments_holding(
    root: Path, session_uuid: str, wanted: Collection[tuple[int, str]]
) -> list[str]:
    """The paths in `attachments/` of regular files holding one of the `wanted` (size,
    SHA-256): the new question's own files, copied there before its turn was stored."""
    if not wanted:
        return []
    sizes = {size for size, _ in wanted}
    found: list[str] = []
    try:
        folder_fd = open_folder(workspace_dir(root, session_uuid))
    except FileNotFoundError:
        return []
    try:
        try:
            sub_fd = open_dir(folder_fd, ATTACHMENTS_DIR)
        except (FileNotFoundError, NotADirectoryError):
            return []
        try:
            with os.scandir(sub_fd) as entries:
                names = sorted(entry.name for entry in entries)
            for name in names:
                info = os.stat(name, dir_fd=sub_fd, follow_symlinks=False)
                if kind_of(info.st_mode) != FILE or info.st_size not in sizes:
                    continue
                with contextlib.suppress(OSError):
                    with os.fdopen(open_file(sub_fd, name), "rb") as handle:
                        digest = hashlib.file_digest(handle, "sha256").hexdigest()
                    if (info.st_size, digest) in wanted:
                        found.append(f"{ATTACHMENTS_DIR}/{name}")
        finally:
            os.close(sub_fd)
    finally:
        os.close(folder_fd)
    return found


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    if isinstance(exc, TooManyEntries):
        return f"it holds {exc}"
    return "its checkpoint cannot be read"
