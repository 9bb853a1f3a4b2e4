"""Message versions: regenerate an answer, edit a question (both start a
run), list a message's versions and switch to one: the page's use cases
(services/versions.py, also state/live.py and state/chat.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import Field

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import responses
from agent_chat.api.runs import started
from agent_chat.api.schemas import MAX_ID, MessageEdit, Out, RunStarted, VersionList
from agent_chat.api.views import version_out
from agent_chat.services import versions as use

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
