"""Message versions (seed 000 §4.2.3): regenerate an answer, edit a question (both start a
run, as the page does), list a message's versions and switch to one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from agent_chat import routes
from agent_chat.api.deps import Backend, Me, Svc
from agent_chat.api.errors import ApiError, not_found, responses
from agent_chat.api.runs import check_can_start, check_message, started
from agent_chat.api.schemas import MAX_ID, MessageEdit, RunStarted, VersionList
from agent_chat.api.sessions import refuse_while_running
from agent_chat.api.views import version_out
from agent_chat.db import messages
from agent_chat.db.models import ChatMessage, MessageRole
from agent_chat.db.turns import session_uuid_of

router = APIRouter(tags=["versions"])
MessageId = Annotated[int, Path(ge=1, le=MAX_ID, description="A message's id.")]


async def _require(svc: Backend, message_id: int, me: int, role: MessageRole | None = None):
    """`me`'s message; 404 when it is missing or another person's (the same answer)."""
    message: ChatMessage | None = await svc.storage.call(
        messages.owned_message, message_id=message_id, user_id=me
    )
    if message is None:
        raise not_found(f"Message {message_id}")
    if role is not None and message.role != role.value:
        raise ApiError(
            422,
            f"Message {message_id} is a {message.role.lower()} message; "
            f"this needs a {role.value.lower()} message.",
            code="wrong_role",
            fields={"messageId": f"not a {role.value.lower()} message"},
        )
    session_uuid = await svc.storage.call(session_uuid_of, chat_session_id=message.session_id)
    return message, session_uuid


@router.post(
    routes.API_MESSAGE_REGENERATE,
    status_code=201,
    response_model=RunStarted,
    responses=responses(404, 409, 429),
)
async def regenerate(svc: Svc, me: Me, message_id: MessageId) -> RunStarted:
    """A new version of an assistant message: the same question answered again."""
    _, session_uuid = await _require(svc, message_id, me, MessageRole.ASSISTANT)
    await check_can_start(svc, session_uuid, me)
    return await started(
        svc.runs.regenerate(user_id=me, session_uuid=session_uuid, message_id=message_id),
        new_version="assistant",
    )


@router.patch(
    routes.API_MESSAGE,
    status_code=201,
    response_model=RunStarted,
    responses=responses(404, 409, 413, 429),
)
async def edit(svc: Svc, me: Me, message_id: MessageId, body: MessageEdit) -> RunStarted:
    """A new version of a user message, answered afresh (a new run starts, as on the page;
    `newMessageId` is the new user message)."""
    _, session_uuid = await _require(svc, message_id, me, MessageRole.USER)
    check_message(svc, body.content, "content")
    await check_can_start(svc, session_uuid, me)
    return await started(
        svc.runs.edit(
            user_id=me, session_uuid=session_uuid, message_id=message_id, text=body.content
        ),
        new_version="user",
    )


@router.get(routes.API_MESSAGE_VERSIONS, response_model=VersionList, responses=responses(404))
async def versions(svc: Svc, me: Me, message_id: MessageId) -> VersionList:
    """The message and its siblings (its versions), in order."""
    await _require(svc, message_id, me)
    group = await svc.storage.call(messages.siblings, message_id=message_id, user_id=me)
    return VersionList(versions=[version_out(m) for m in group])


@router.post(routes.API_MESSAGE_ACTIVATE, response_model=VersionList, responses=responses(404, 409))
async def activate(svc: Svc, me: Me, message_id: MessageId) -> VersionList:
    """Show this version (and the branch below it) from now on."""
    _, session_uuid = await _require(svc, message_id, me)
    await refuse_while_running(svc, session_uuid, me, "Switching versions")
    await svc.storage.call(messages.set_active, message_id=message_id, user_id=me)
    group = await svc.storage.call(messages.siblings, message_id=message_id, user_id=me)
    return VersionList(versions=[version_out(m) for m in group])
