"""The workspace follows the version arrows: switching versions (`< n/m >`) puts the
conversation's folder as the shown branch left it (docs/architecture.md, "Workspace
checkpoints"; recording and the regenerate's restore: services/checkpoints.py).

The shown branch's files are the checkpoint of its last Workspace answer (answers of other
profiles never touched the folder). A branch without any Workspace answer is the empty
folder, as a first turn starts from. Left as it is, and said: a Workspace answer without a
checkpoint (it predates them, or its record failed), since what the folder held then is
unknown and guessing would delete work. A conversation that never recorded a checkpoint is
left alone silently (it never used the workspace since checkpoints exist).

The caller has refused the switch while a run goes on (services/versions.py): between runs
only runs change the folder, and each records what it left, so nothing unrecorded is lost.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_chat.common.checkpoint_restore import CheckpointMissing, restore
from agent_chat.common.checkpoints import (
    UNDONE,
    BadCheckpoint,
    TooManyEntries,
    current_name,
    has_store,
    store_of,
)
from agent_chat.common.tool_profiles import uses_workspace
from agent_chat.common.workspaces import workspaces_root
from agent_chat.db import messages, sessions
from agent_chat.db.models import ChatMessage, MessageRole
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)

NOT_RECORDED = (
    "The workspace was left as it is: the files of this version were not recorded "
    "(its answer predates workspace checkpoints)."
)
NOT_PUT_BACK = (
    "The workspace could not be put back as this version left it ({reason}); "
    "its files are as they were."
)
TOO_BIG = "Files too big to keep were left as they are: {paths}."


@dataclass(frozen=True)
class FilesShown:
    """What switching did to the folder. `answer_id`: whose checkpoint it holds now (None:
    the empty folder, or nothing done); `note`: a sentence for the person, "" when all is
    as the version left it (or the conversation has no workspace)."""

    restored: bool
    answer_id: int | None = None
    note: str = ""


def last_workspace_answer(branch: list[ChatMessage]) -> ChatMessage | None:
    """The branch's last answer whose run had the Workspace profile."""
    for message in reversed(branch):
        if message.role == MessageRole.ASSISTANT.value and uses_workspace(
            message.tool_profile or ""
        ):
            return message
    return None


def _branch_target(*, session: Any, chat_session_id: int) -> tuple[bool, int | None]:
    """Whether the shown branch has a Workspace answer, and the last one's id."""
    answer = last_workspace_answer(
        messages.active_branch(session=session, chat_session_id=chat_session_id)
    )
    return answer is not None, None if answer is None else answer.id


async def follow_branch(
    storage: Storage, *, chat_session_id: int, session_uuid: str, root: Path | None = None
) -> FilesShown:
    """Put the folder as the shown branch left it (see the module's words)."""
    root = workspaces_root() if root is None else root
    found, answer_id = await storage.call(_branch_target, chat_session_id=chat_session_id)
    if not await asyncio.to_thread(has_store, root, session_uuid):
        return FilesShown(False, note=NOT_RECORDED if found else "")
    name = None
    if answer_id is not None:
        name = await asyncio.to_thread(current_name, root, session_uuid, answer_id)
        if name is None:
            return FilesShown(False, note=NOT_RECORDED)
    try:
        done = await asyncio.to_thread(restore, root, session_uuid, name)
    except (OSError, BadCheckpoint, CheckpointMissing, TooManyEntries) as exc:
        log.warning("Workspace %s not switched to %s: %r", session_uuid, name, exc)
        return FilesShown(False, note=NOT_PUT_BACK.format(reason=reason_of(exc)))
    note = ""
    if done.not_restorable:
        note = TOO_BIG.format(paths=", ".join(done.not_restorable[:5]))
    return FilesShown(True, answer_id, note)


def reason_of(exc: Exception) -> str:
    """A failure in a person's words, never an internal error's text."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[:1].lower() + exc.strerror[1:]
    if isinstance(exc, TooManyEntries):
        return f"it holds {exc}"
    return "its checkpoint cannot be read"


# ---- which version the drawer shows ---------------------------------------------------------


def _label(*, session: Any, session_uuid: str, user_id: int, head: str) -> str:
    chat = sessions.get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None or chat.id is None:
        return ""
    answer = last_workspace_answer(messages.active_branch(session=session, chat_session_id=chat.id))
    if answer is None or head not in (str(answer.id), f"{answer.id}{UNDONE}"):
        return ""  # a run under way, or nothing recorded for this branch
    undone = ", its changes undone" if head.endswith(UNDONE) else ""
    group = messages.siblings(session=session, message_id=answer.id, user_id=user_id)
    if len(group) > 1:
        index = [m.id for m in group].index(answer.id) + 1
        return f"Files as answer {index}/{len(group)} left them{undone}"
    if answer.parent_id is not None:
        asked = messages.siblings(session=session, message_id=answer.parent_id, user_id=user_id)
        if len(asked) > 1:
            index = [m.id for m in asked].index(answer.parent_id) + 1
            return f"Files as the answer to question {index}/{len(asked)} left them{undone}"
    return f"Files as the last answer left them{undone}"


def head_of(session_uuid: str, root: Path | None = None) -> str | None:
    """The checkpoint the folder was last recorded or put back as (a file read)."""
    root = workspaces_root() if root is None else root
    try:
        return store_of(root, session_uuid).head()
    except ValueError:
        return None


async def shown_label(storage: Storage, *, user_id: int, session_uuid: str) -> str:
    """Which version the folder holds, in words ("Files as answer 2/3 left them");
    "" when it is not the shown branch's (a run under way, nothing recorded). The
    conversation is `user_id`'s or nothing is said."""
    head = await asyncio.to_thread(head_of, session_uuid)
    if head is None:
        return ""
    return await storage.call(_label, session_uuid=session_uuid, user_id=user_id, head=head)
