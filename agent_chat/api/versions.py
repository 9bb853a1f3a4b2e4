"""Message versions: regenerate an answer, edit a question (both start a
run), list a message's versions and switch to one: the page's use cases
(services/versions.py, also state/live.py and state/chat.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import Field

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import responses
from agent_chat.api.runs import refusals, started
from agent_chat.api.schemas import MAX_ID, MessageEdit, Out, RunStarted, VersionList
from agent_chat.api.views import version_out
from agent_chat.services import versions as use
from agent_chat.services import workspace_changes

router = APIRouter(tags=["versions"])


class WorkspaceFollowed(Out):
    restored: bool = Field(description="The workspace folder was put as this version left it.")
    answer_id: int | None = Field(
        default=None, description="The answer whose files the folder holds (null: empty)."
    )
    note: str = Field(default="", description="Why the folder was left, or what it kept.")


class VersionsActivated(VersionList):
    workspace: WorkspaceFollowed


MessageId = Annotated[int, Path(ge=1, le=MAX_ID, description="A message's id.")]


@router.post(
    routes.API_MESSAGE_REGENERATE,
    status_code=201,
    response_model=RunStarted,
    responses=responses(404, 409, 429),
)
async def regenerate(svc: Svc, me: Me, message_id: MessageId) -> RunStarted:
    """A new version of an assistant message: the same question answered again."""
    return await started(
        use.regenerate(svc, user_id=me, message_id=message_id), new_version="assistant"
    )


@router.patch(
    routes.API_MESSAGE,
    status_code=201,
    response_model=RunStarted,
    responses=responses(404, 409, 413, 429),
)
async def edit(svc: Svc, me: Me, message_id: MessageId, body: MessageEdit) -> RunStarted:
    """A new version of a user message, answered afresh (a new run starts, as on the page;
    `newMessageId` is the new user message). It keeps the message's files unless
    `attachmentIds` gives the new version's."""
    return await started(
        use.edit_and_resend(
            svc,
            user_id=me,
            message_id=message_id,
            text=body.content,
            attachment_ids=body.attachment_ids,
        ),
        new_version="user",
    )


@router.get(routes.API_MESSAGE_VERSIONS, response_model=VersionList, responses=responses(404))
async def versions(svc: Svc, me: Me, message_id: MessageId) -> VersionList:
    """The message and its siblings (its versions), in order."""
    await use.owned_message(svc, user_id=me, message_id=message_id)
    group = await use.versions_of(svc, user_id=me, message_id=message_id)
    return VersionList(versions=[version_out(m) for m in group])


@router.post(
    routes.API_MESSAGE_ACTIVATE, response_model=VersionsActivated, responses=responses(404, 409)
)
async def activate(svc: Svc, me: Me, message_id: MessageId) -> VersionsActivated:
    """Show this version (and the branch below it) from now on; the conversation's
    workspace folder follows (`workspace`: what became of it)."""
    switched = await use.switch(svc, user_id=me, message_id=message_id)
    group = await use.versions_of(svc, user_id=me, message_id=message_id)
    files = switched.files
    return VersionsActivated(
        versions=[version_out(m) for m in group],
        workspace=WorkspaceFollowed(
            restored=files.restored, answer_id=files.answer_id, note=files.note
        ),
    )


# ---- what an answer changed in the workspace, and undo ---------------------------------------

API_WORKSPACE_CHANGES = "/api/chat/messages/{message_id}/workspace-changes"
API_WORKSPACE_UNDO = API_WORKSPACE_CHANGES + "/undo"


class FileChangeOut(Out):
    path: str = Field(description="Relative to the conversation's folder.")
    change: Literal["added", "changed", "deleted"]
    kind: Literal["file", "link"]
    size_before: int | None = Field(default=None, description="Bytes; null: no file there.")
    size_after: int | None = None
    binary: bool = Field(description="No text diff: not UTF-8 text, or too big to keep.")
    diff: str = Field(description="A unified diff of a text file (or a link's target).")
    truncated: bool = Field(description="The diff was cut at its size limits.")


class WorkspaceChangesOut(Out):
    answer_id: int
    parent_answer_id: int | None = Field(
        description="The answer whose files it started from (null: the empty folder)."
    )
    known: bool = Field(description="Both states are recorded (else no changes are listed).")
    undone: bool = Field(description="Its changes were undone.")
    can_undo: bool = Field(description="The folder holds its files and something changed.")
    changes: list[FileChangeOut]


def _changes_out(found: workspace_changes.AnswerChanges) -> WorkspaceChangesOut:
    return WorkspaceChangesOut(
        answer_id=found.answer_id,
        parent_answer_id=found.parent_id,
        known=found.known,
        undone=found.undone,
        can_undo=found.can_undo,
        changes=[FileChangeOut(**vars(c)) for c in found.changes],
    )


@router.get(
    API_WORKSPACE_CHANGES, response_model=WorkspaceChangesOut, responses=responses(404, 422)
)
async def changes(svc: Svc, me: Me, message_id: MessageId) -> WorkspaceChangesOut:
    """What a Workspace answer changed in the conversation's folder: its files compared with
    those it started from (the answer above, or the empty folder)."""
    with refusals():
        found = await workspace_changes.changes_of(svc, user_id=me, message_id=message_id)
    return _changes_out(found)


@router.post(
    API_WORKSPACE_UNDO, response_model=WorkspaceChangesOut, responses=responses(404, 409, 422)
)
async def undo(svc: Svc, me: Me, message_id: MessageId) -> WorkspaceChangesOut:
    """Put the folder back as before this answer, recorded as the answer's files from now
    on (a switch to its branch and a regenerate below it start from there). Only the shown
    branch's last Workspace answer (409 `not_latest`); 409 while a run goes on."""
    with refusals():
        found = await workspace_changes.undo_changes(svc, user_id=me, message_id=message_id)
    return _changes_out(found)
