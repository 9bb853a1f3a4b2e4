"""See and undo what an answer changed in the workspace (docs/architecture.md, "Workspace
checkpoints").

An answer's changes are its checkpoint compared with the one it started from: the nearest
Workspace answer above its question (the empty folder on the first turn), as a regenerate
starts from (services/checkpoints.py). Not shown when either is unknown (not recorded).

**Undo** puts the folder back as it was before the answer and records that as the answer's
files from now on: a new checkpoint `<answer id>-undone` (a recorded checkpoint never
changes), which a switch to its branch and a regenerate or edit below it start from
(`common/checkpoints.py:current_name`); the answer's own checkpoint stays. Only the shown
branch's last Workspace answer, whose files the folder holds: later answers built on an
earlier one's files, and undoing under them would leave their checkpoints saying what the
folder no longer is. Refused while a run goes on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_chat.common.checkpoint_diff import Change, changes, count
from agent_chat.common.checkpoint_restore import CheckpointMissing, restore
from agent_chat.common.checkpoint_store import Manifest
from agent_chat.common.checkpoints import (
    UNDONE,
    BadCheckpoint,
    TooManyEntries,
    current_name,
    has_store,
    record,
    store_of,
)
from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.common.workspaces import workspaces_root
from agent_chat.db import messages
from agent_chat.db.models import ChatMessage, MessageRole
from agent_chat.services.backend import Backend
from agent_chat.services.checkpoints import restore_point
from agent_chat.services.conversations import while_quiet
from agent_chat.services.runs import InvalidRunInput, RunConflict
from agent_chat.services.versions import owned_message
from agent_chat.services.workspace_versions import last_workspace_answer, reason_of

log = logging.getLogger(__name__)

NOT_LATEST = (
    "Only the changes of the last workspace answer shown can be undone: later answers "
    "built on these files."
)
NOT_KNOWN = "What the workspace held before this answer was not recorded, so it cannot be undone."
NOT_UNDONE = "The changes could not be undone ({reason})."
HALF_UNDONE = (
    "The files are back as before this answer, but that could not be recorded ({reason}): "
    "switching versions will bring the changes back."
)


@dataclass(frozen=True)
class AnswerChanges:
    answer_id: int
    parent_id: int | None  # the answer whose files it started from (None: the empty folder)
    known: bool  # both checkpoints are recorded (else `changes` is empty)
    changes: list[Change]
    undone: bool  # its changes were undone (the folder's files as before it)
    can_undo: bool  # its files are the shown ones and there is something to undo


@functools.lru_cache(maxsize=512)
def _manifest(root: Path, session_uuid: str, name: str) -> Manifest | None:
    """A checkpoint never changes once recorded: read once per process (not to be changed)."""
    return store_of(root, session_uuid).load(name)


@functools.lru_cache(maxsize=2048)
def _count(root: Path, session_uuid: str, old: str | None, new: str) -> int:
    """Files changed from checkpoint `old` (None: the empty folder) to `new`: both never
    change, so a page's reloads count each pair once per process."""
    before = {} if old is None else _manifest(root, session_uuid, old)
    after = _manifest(root, session_uuid, new)
    return 0 if before is None or after is None else count(before, after)


def _side(root: Path, session_uuid: str, answer_id: int | None) -> Manifest | None:
    """The files as the answer left them, as they stand (None: unknown); {} for None."""
    if answer_id is None:
        return {}
    name = current_name(root, session_uuid, answer_id)
    return None if name is None else _manifest(root, session_uuid, name)


def _original(root: Path, session_uuid: str, answer_id: int) -> Manifest | None:
    return (
        _manifest(root, session_uuid, str(answer_id))
        if store_of(root, session_uuid).has(str(answer_id))
        else None
    )


# ---- the answers' footers ------------------------------------------------------------------


def footer_labels(
    session_uuid: str, branch: list[ChatMessage], root: Path | None = None
) -> dict[str, str]:
    """For each Workspace answer of the shown branch, what its footer says: "3 files
    changed", "Changes undone" (no entry: nothing changed, or unknown). File reads only."""
    root = workspaces_root() if root is None else root
    labels: dict[str, str] = {}
    if not session_uuid or not has_store(root, session_uuid):
        return labels
    parent: int | None = None
    for message in branch:
        if message.role != MessageRole.ASSISTANT.value or not uses_workspace(
            message.tool_profile or ""
        ):
            continue
        try:
            labels.update(_label(root, session_uuid, message.id, parent))
        except (OSError, BadCheckpoint, ValueError) as exc:
            log.warning("changes of answer %s unknown: %r", message.id, exc)
        parent = message.id
    return labels


def _label(root: Path, session_uuid: str, answer_id: Any, parent: int | None) -> dict[str, str]:
    if store_of(root, session_uuid).has(f"{answer_id}{UNDONE}"):
        return {str(answer_id): "Changes undone"}
    old_name = None if parent is None else current_name(root, session_uuid, parent)
    if (parent is not None and old_name is None) or not store_of(root, session_uuid).has(
        str(answer_id)
    ):
        return {}
    n = _count(root, session_uuid, old_name, str(answer_id))
    return {str(answer_id): f"{n} file{'' if n == 1 else 's'} changed"} if n else {}


# ---- one answer ----------------------------------------------------------------------------


def _where(*, session: Any, answer: ChatMessage) -> tuple[int | None, bool]:
    """The answer it started from, and whether its files are the shown ones."""
    parent = None
    if answer.parent_id is not None:
        parent, _ = restore_point(session=session, question_id=answer.parent_id)
    shown = last_workspace_answer(
        messages.active_branch(session=session, chat_session_id=answer.session_id)
    )
    return parent, shown is not None and shown.id == answer.id


async def _workspace_answer(svc: Backend, user_id: int, message_id: int) -> tuple[ChatMessage, str]:
    answer, session_uuid = await owned_message(
        svc, user_id=user_id, message_id=message_id, role=MessageRole.ASSISTANT
    )
    if not uses_workspace(answer.tool_profile or ""):
        raise InvalidRunInput(
            f"Message {message_id} was not answered in a workspace: it changed no files.",
            {"messageId": "not a workspace answer"},
            "not_workspace",
        )
    return answer, session_uuid


def _compared(
    root: Path, session_uuid: str, answer_id: int, parent: int | None, shown: bool
) -> AnswerChanges:
    undone = store_of(root, session_uuid).has(f"{answer_id}{UNDONE}")
    old, new = _side(root, session_uuid, parent), _original(root, session_uuid, answer_id)
    if old is None or new is None:
        return AnswerChanges(answer_id, parent, False, [], undone, False)
    found = changes(store_of(root, session_uuid), old, new)
    return AnswerChanges(
        answer_id, parent, True, found, undone, shown and bool(found) and not undone
    )


async def changes_of(
    svc: Backend, *, user_id: int, message_id: int, root: Path | None = None
) -> AnswerChanges:
    """What the answer changed in the workspace (`NotFound` for another's message;
    `InvalidRunInput` for a question or an answer without the workspace)."""
    root = workspaces_root() if root is None else root
    answer, session_uuid = await _workspace_answer(svc, user_id, message_id)
    parent, shown = await svc.storage.call(_where, answer=answer)
    try:
        return await asyncio.to_thread(_compared, root, session_uuid, message_id, parent, shown)
    except (OSError, BadCheckpoint, ValueError) as exc:
        log.warning("changes of answer %s unknown: %r", message_id, exc)
        return AnswerChanges(message_id, parent, False, [], False, False)


async def undo_changes(
    svc: Backend, *, user_id: int, message_id: int, root: Path | None = None
) -> AnswerChanges:
    """Put the folder back as before the answer and record it as the answer's files (see
    the module's words); the answer's changes as they stand after. `Busy` while a run goes
    on; `RunConflict` when the answer's files are not the shown ones, or it cannot be done."""
    root = workspaces_root() if root is None else root
    answer, session_uuid = await _workspace_answer(svc, user_id, message_id)
    async with while_quiet(
        svc, user_id=user_id, session_uuid=session_uuid, action="Undoing an answer's changes"
    ):
        return await _undo(svc, root, session_uuid, answer)


async def _undo(svc: Backend, root: Path, session_uuid: str, answer: ChatMessage) -> AnswerChanges:
    message_id = answer.id
    parent, shown = await svc.storage.call(_where, answer=answer)
    before = await asyncio.to_thread(_compared, root, session_uuid, message_id, parent, shown)
    if before.undone:
        return before  # undone already (twice clicked, two tabs): as it is
    if not shown:
        raise RunConflict(NOT_LATEST, "not_latest")
    if not before.known:
        raise RunConflict(NOT_KNOWN, "not_recorded")
    if not before.changes:
        return before
    name = None if parent is None else current_name(root, session_uuid, parent)
    try:
        await asyncio.to_thread(restore, root, session_uuid, name)
    except (OSError, BadCheckpoint, CheckpointMissing, TooManyEntries) as exc:
        log.warning("Answer %s's changes not undone: %r", message_id, exc)
        raise RunConflict(NOT_UNDONE.format(reason=reason_of(exc)), "not_undone") from exc
    try:
        await asyncio.to_thread(record, root, session_uuid, f"{message_id}{UNDONE}")
    except (OSError, BadCheckpoint, TooManyEntries, ValueError) as exc:
        log.warning("Answer %s's undo not recorded: %r", message_id, exc)
        raise RunConflict(HALF_UNDONE.format(reason=reason_of(exc)), "not_recorded") from exc
    return await asyncio.to_thread(_compared, root, session_uuid, message_id, parent, shown)
