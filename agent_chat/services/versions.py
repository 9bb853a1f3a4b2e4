"""Use cases on a message's versions: regenerate an answer and edit-and-resend a question
(each a new version, answered by a new run), and switch which version is shown.

The page (state/live.py, state/chat.py) and the HTTP API (api/versions.py) call these; the
refusals are those of services/runs.py (a run going on is `RunRefused` RUN_ACTIVE for a new
version, `Busy` for a switch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_chat.db import messages, turns
from agent_chat.db.errors import NotFound
from agent_chat.db.models import ChatMessage, MessageRole
from agent_chat.runs.manager import StartedRun
from agent_chat.services import attachment_parts, attachments, workspace_versions
from agent_chat.services.backend import Backend
from agent_chat.services.conversations import while_quiet
from agent_chat.services.runs import InvalidRunInput, check_can_start, check_message
from agent_chat.services.workspace_versions import FilesShown


def _message_and_uuid(
    *, session: Any, message_id: int, user_id: int
) -> tuple[ChatMessage, str] | None:
    """The message and its conversation's uuid, if it is `user_id`'s (one transaction)."""
    message = messages.owned_message(session=session, message_id=message_id, user_id=user_id)
    if message is None:
        return None
    return message, turns.session_uuid_of(session=session, chat_session_id=message.session_id)


async def owned_message(
    svc: Backend, *, user_id: int, message_id: int, role: MessageRole | None = None
) -> tuple[ChatMessage, str]:
    """`user_id`'s message (of `role`, if given) and its conversation's uuid; `NotFound`
    for a missing message or another person's (the same answer)."""
    if not isinstance(message_id, int) or isinstance(message_id, bool):
        raise NotFound(f"Message {message_id!r} does not exist.")  # a page event sends anything
    found = await svc.storage.call(_message_and_uuid, message_id=message_id, user_id=user_id)
    if found is None:
        raise NotFound(f"Message {message_id} does not exist.")
    message, session_uuid = found
    if role is not None and message.role != role.value:
        wanted = role.value.lower()
        raise InvalidRunInput(
            f"Message {message_id} is a {message.role.lower()} message; "
            f"this needs a{'n' if wanted[0] in 'aeiou' else ''} {wanted} message.",
            {"messageId": f"not a {wanted} message"},
            "wrong_role",
        )
    return message, session_uuid


async def regenerate(svc: Backend, *, user_id: int, message_id: int) -> StartedRun:
    """A new version of an assistant message: the same question answered again."""
    answer, session_uuid = await owned_message(
        svc, user_id=user_id, message_id=message_id, role=MessageRole.ASSISTANT
    )
    await check_can_start(svc, user_id=user_id, session_uuid=session_uuid, action="Regenerating")
    content, saved = None, {}
    if answer.parent_id is not None:  # its question's attachments go again
        content = await attachment_parts.for_regenerate(
            svc,
            user_id=user_id,
            session_uuid=session_uuid,
            question_id=answer.parent_id,
            saved=saved,
        )
    started = await svc.runs.regenerate(
        user_id=user_id, session_uuid=session_uuid, message_id=message_id, content=content
    )
    await attachment_parts.remember_saved(
        svc, user_id=user_id, message_id=started.user_message_id, saved=saved
    )
    return started


async def edit_and_resend(
    svc: Backend,
    *,
    user_id: int,
    message_id: int,
    text: str,
    attachment_ids: list[int] | None = None,
) -> StartedRun:
    """A new version of a user message with this text, answered afresh from the same point
    (the branch below the old version stays, one version away). `attachment_ids`: the new
    version's files (the person's uploads, checked as on a send); None keeps the old one's."""
    _, session_uuid = await owned_message(
        svc, user_id=user_id, message_id=message_id, role=MessageRole.USER
    )
    check_message(svc, text, field="content")
    await check_can_start(svc, user_id=user_id, session_uuid=session_uuid, action="Editing")
    if attachment_ids is None:  # the old version's files go with the new one, as on a send
        kept = await attachments.of_messages(svc, user_id=user_id, message_ids=[message_id])
        attachment_ids = [row.id for row in kept.get(message_id, []) if row.id is not None]
    saved: dict[int, str] = {}
    linked, content = await attachment_parts.for_run(
        svc,
        user_id=user_id,
        session_uuid=session_uuid,
        model_id=None,
        text=text,
        attachment_ids=attachment_ids,
        saved=saved,
    )
    started = await svc.runs.edit(
        user_id=user_id,
        session_uuid=session_uuid,
        message_id=message_id,
        text=text,
        attachment_ids=linked,
        content=content,
    )
    await attachment_parts.remember_saved(
        svc, user_id=user_id, message_id=started.user_message_id, saved=saved
    )
    return started


async def versions_of(svc: Backend, *, user_id: int, message_id: int) -> list[ChatMessage]:
    """The message and its siblings (its versions) in order; `NotFound` for another's."""
    return await svc.storage.call(messages.siblings, message_id=message_id, user_id=user_id)


@dataclass(frozen=True)
class Switched:
    message: ChatMessage  # the version shown now
    files: FilesShown  # what became of the workspace folder


async def switch(svc: Backend, *, user_id: int, message_id: int, step: int = 0) -> Switched:
    """Show the version `step` places away from this message (0: this one; clamped to the
    first and last) and the branch below it from now on, and put the workspace folder as
    that branch left it (services/workspace_versions.py). `Busy` while a run of the
    conversation goes on (it answers on the branch shown, in the folder)."""
    if not isinstance(step, int) or isinstance(step, bool):
        raise InvalidRunInput(
            f"A version step is a whole number, not {step!r}.", {"step": "not a whole number"}
        )
    _, session_uuid = await owned_message(svc, user_id=user_id, message_id=message_id)
    async with while_quiet(
        svc, user_id=user_id, session_uuid=session_uuid, action="Switching versions"
    ):
        shown = await svc.storage.call(
            messages.switch_version, message_id=message_id, user_id=user_id, step=step
        )
        files = await workspace_versions.follow_branch(
            svc.storage, chat_session_id=shown.session_id, session_uuid=session_uuid
        )
    return Switched(shown, files)


async def switch_version(
    svc: Backend, *, user_id: int, message_id: int, step: int = 0
) -> ChatMessage:
    """`switch`, for a caller that needs only the version shown."""
    switched = await switch(svc, user_id=user_id, message_id=message_id, step=step)
    return switched.message
