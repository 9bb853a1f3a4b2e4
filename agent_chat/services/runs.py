"""Use cases on a run: send a message (a new conversation's first one too), queue one behind
the run going on, answer the agent's question or approval, steer it, stop it, and reset the
conversation's agent. Regenerating and editing (a new version) are `services/versions.py`.

The page (state/live.py, state/chat.py) and the HTTP API (api/runs.py, api/sessions.py) call
these, so the checks a client can act on (an empty or too long message, a run going on, the
person's run limit, a question no longer open) are made once, before the RunManager command,
which checks again under its lock. Refusals: the store's errors (`NotFound`,
`ValidationFailed`, here `InvalidRunInput` with a `code`), `RunRefused` (its `code` says which
rule: db/running.py's RUN_ACTIVE, TOO_MANY_RUNS), `UnknownRun` (another person's run is the
same as none) and `RunConflict` (the run or question is not in the state the command needs).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from agent_chat.db import messages, model_configs, pauses, queue, sessions
from agent_chat.db.errors import NotFound, StoreError, ValidationFailed
from agent_chat.db.models import ChatMessage, RunPause
from agent_chat.db.running import RUN_ACTIVE, STILL_RUNNING, TOO_MANY_RUNS, too_many_runs
from agent_chat.runs.client import BridgeError
from agent_chat.runs.manager import RunRefused, StartedRun, UnknownRun
from agent_chat.services import attachment_parts
from agent_chat.services.backend import Backend
from agent_chat.services.conversations import (
    conversation_for,
    conversation_state,
    refuse_while_running,
    remove_folder,
    usable_skills,
)
from agent_chat.services.errors import Busy, ServiceError

MESSAGE_TOO_LONG = "message_too_long"  # the API's 413
RUN_FINISHED = "run_finished"
NOT_OPEN = "not_open"
FILES_DO_NOT_WAIT = (
    "A message with files cannot wait in the queue: send it when the answer has ended."
)


class InvalidRunInput(ValidationFailed):
    """Input refused field by field, with one sentence for the person; `code` names the rule
    for a client ("invalid", `MESSAGE_TOO_LONG`, "wrong_role")."""

    def __init__(self, message: str, fields: dict[str, str], code: str = "invalid") -> None:
        super().__init__(fields)
        self.args = (message,)  # str(): the sentence, not the joined fields
        self.code = code


class RunConflict(Busy):
    """The run or its question is not in the state the command needs (over, answered, not
    the branch's end): the API's 409 with `code`."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


# What a run use case raises for the person (its message says why); bridge errors aside.
REFUSALS = (RunRefused, UnknownRun, StoreError, ServiceError)


# ---- the checks before a run starts --------------------------------------------------------


def check_message(svc: Backend, text: str, *, field: str = "message") -> str:
    """The message rules (RunManager.validate_message): not empty, at most
    `max_message_chars`; `InvalidRunInput` naming `field` otherwise."""
    try:
        return svc.runs.validate_message(text)
    except RunRefused as exc:
        limit = svc.settings.max_message_chars
        if len(text) > limit:
            fields = {field: f"at most {limit:,} characters"}
            raise InvalidRunInput(str(exc), fields, MESSAGE_TOO_LONG) from exc
        raise InvalidRunInput(str(exc), {field: str(exc)}) from exc


async def check_choices(
    svc: Backend, *, model_id: int | None, skill_folder: str | None, tool_profile: str | None
) -> None:
    """A model that exists, a usable skill, a tool profile the operator enabled (None: the
    conversation's)."""
    known = model_id is None or await svc.storage.call(model_configs.get_model, model_id=model_id)
    if not known:
        raise InvalidRunInput(f"There is no model {model_id}.", {"modelId": "unknown"})
    if skill_folder is not None and skill_folder not in usable_skills(svc):
        message = f"There is no usable skill {skill_folder!r}."
        raise InvalidRunInput(message, {"skillFolder": "unknown"})
    if tool_profile is not None and tool_profile not in svc.settings.tool_profiles:
        message = f"The tool profile {tool_profile!r} is not enabled here."
        raise InvalidRunInput(message, {"toolProfile": "not enabled"})


async def check_can_start(
    svc: Backend, *, user_id: int, session_uuid: str, action: str | None = None
) -> None:
    """`RunRefused` (RUN_ACTIVE) while a run of the conversation goes on, on any worker
    (`action`, e.g. "Regenerating", says what is refused; the engine's sentence without);
    TOO_MANY_RUNS at the person's limit of working runs."""
    try:
        await refuse_while_running(
            svc, user_id=user_id, session_uuid=session_uuid, action=action or "Sending"
        )
    except Busy as exc:  # a new run: the engine's code (the API's 409 run_active)
        raise RunRefused(str(exc) if action else STILL_RUNNING, RUN_ACTIVE) from exc
    working = await svc.runs.working_runs(user_id=user_id)
    limit = svc.settings.max_active_runs
    if working >= limit:
        raise RunRefused(too_many_runs(working, limit), TOO_MANY_RUNS)


# ---- sending ---------------------------------------------------------------------------------


async def start_run(
    svc: Backend,
    *,
    user_id: int,
    session_uuid: str,
    text: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
    max_iterations: int | None = None,
    parent_message_id: int | None = None,
    attachment_ids: list[int] | None = None,
) -> StartedRun:
    """The message joins the active branch and a run answers it. `parent_message_id`, if
    given, must be the branch's last message (`RunConflict` "not_branch_end" otherwise: the
    client saw another branch). `max_iterations`: the agent's step limit for this run.
    `attachment_ids`: the person's uploads the message carries (linked to it in the turn's
    transaction; the agent gets them as services/attachment_parts.py says)."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    check_message(svc, text)
    await check_choices(
        svc, model_id=model_id, skill_folder=skill_folder, tool_profile=tool_profile
    )
    await check_can_start(svc, user_id=user_id, session_uuid=chat.session_uuid)
    if parent_message_id is not None:
        branch = await svc.storage.call(messages.active_branch, chat_session_id=chat.id)
        leaf = branch[-1].id if branch else None
        if parent_message_id != leaf:
            raise RunConflict(
                f"Message {parent_message_id} is not the end of the active branch "
                f"(that is {leaf}): activate its version first, or edit a message.",
                "not_branch_end",
            )
    saved: dict[int, str] = {}
    linked, content = await attachment_parts.for_run(
        svc,
        user_id=user_id,
        session_uuid=chat.session_uuid,
        model_id=model_id,
        text=text,
        attachment_ids=attachment_ids or [],
        tool_profile=tool_profile,  # Workspace: the files are saved in its folder too
        saved=saved,
    )
    started = await svc.runs.send(
        user_id=user_id,
        session_uuid=chat.session_uuid,
        text=text,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
        max_iterations=max_iterations,
        attachment_ids=linked,
        content=content,
    )
    await attachment_parts.remember_saved(
        svc, user_id=user_id, message_id=started.user_message_id, saved=saved
    )
    return started


async def start_conversation(
    svc: Backend,
    *,
    user_id: int,
    session_uuid: str,
    hermes_session: str,
    text: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
    attachment_ids: list[int] | None = None,
) -> StartedRun:
    """A new conversation's first message: the conversation is made with the ids its page
    chose when it opened (its agent may be built for them already) and the run starts.
    Refused, nothing is kept: there is no conversation without a message (an attachment
    not the person's included)."""
    try:
        session_uuid = str(uuid.UUID(session_uuid))
    except (TypeError, ValueError) as exc:
        raise InvalidRunInput(
            "A new conversation needs a UUID.", {"sessionId": "not a UUID"}
        ) from exc
    choices = {"model_id": model_id, "skill_folder": skill_folder, "tool_profile": tool_profile}
    check_message(svc, text)  # before the row: most refusals leave nothing to remove
    await check_choices(svc, **choices)
    await svc.storage.call(
        sessions.create_session,
        user_id=user_id,
        session_uuid=session_uuid,
        hermes_session=hermes_session,
    )
    try:
        return await start_run(
            svc,
            user_id=user_id,
            session_uuid=session_uuid,
            text=text,
            attachment_ids=attachment_ids,
            **choices,
        )
    except REFUSALS:  # refused before anything was stored
        await svc.storage.call(sessions.delete_session, session_uuid=session_uuid, user_id=user_id)
        # Files copied for a Workspace run before the turn refused it go with the folder.
        await remove_folder(session_uuid)
        raise


async def send_message(
    svc: Backend,
    *,
    user_id: int,
    session_uuid: str,
    text: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
    attachment_ids: list[int] | None = None,
) -> StartedRun | None:
    """Enter in the page's composer: a run answers the message now, or, while one goes on
    (on any worker), it waits in the conversation's queue (None) and is sent when it ends.
    A message with attachments does not wait (the queue keeps text only): `Busy` then."""
    choices = {"model_id": model_id, "skill_folder": skill_folder, "tool_profile": tool_profile}
    if await conversation_state(svc, user_id=user_id, session_uuid=session_uuid):
        if attachment_ids:
            raise Busy(FILES_DO_NOT_WAIT)
        return await queue_message(
            svc, user_id=user_id, session_uuid=session_uuid, text=text, **choices
        )
    return await start_run(
        svc,
        user_id=user_id,
        session_uuid=session_uuid,
        text=text,
        attachment_ids=attachment_ids,
        **choices,
    )


# ---- the queue -------------------------------------------------------------------------------


async def queue_message(
    svc: Backend,
    *,
    user_id: int,
    session_uuid: str,
    text: str,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
) -> StartedRun | None:
    """Queue a message behind the conversation's run, with the choices it will be sent with;
    sent at once (the StartedRun) when no run works any more."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    check_message(svc, text)
    await check_choices(
        svc, model_id=model_id, skill_folder=skill_folder, tool_profile=tool_profile
    )
    return await svc.runs.queue(
        user_id=user_id,
        session_uuid=chat.session_uuid,
        text=text,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
    )


class QueuedNotFound(NotFound):
    """No queued message with this id is the person's (sent, removed, or another's)."""


async def take_queued(svc: Backend, *, user_id: int, queued_id: int | str) -> str:
    """Take a queued message out of the queue (to cancel it, or to edit it in the composer);
    its text. `QueuedNotFound` when it was sent or removed meanwhile, or is another's."""
    text = str(queued_id)
    if not text.isdigit():  # from a page event: anything may come
        raise QueuedNotFound(f"Queued message {text!r} does not exist.")
    taken = await svc.storage.call(queue.delete_queued, queued_id=int(text), user_id=user_id)
    if taken is None:
        raise QueuedNotFound(f"Queued message {text} does not exist.")
    return taken.content


# ---- a run going on: answer, steer, stop -----------------------------------------------------


def _run_and_pause(
    *, session: Any, run_id: str, user_id: int
) -> tuple[ChatMessage, RunPause | None] | None:
    """The run's answer and its open question, if the run is `user_id`'s (one transaction)."""
    if messages.run_owner(session=session, run_id=run_id) != user_id:
        return None
    answer = messages.message_by_run(session=session, run_id=run_id)
    assert answer is not None and answer.id is not None  # it has an owner
    return answer, pauses.open_pause(session=session, message_id=answer.id)


async def _going_run(svc: Backend, *, user_id: int, run_id: str) -> RunPause | None:
    """`user_id`'s run, going on (on any worker): its open question, if any. `UnknownRun`
    for an unknown run or another person's; `RunConflict` when it is over."""
    found = await svc.storage.call(_run_and_pause, run_id=run_id, user_id=user_id)
    if found is None:
        raise UnknownRun(run_id)
    if not await svc.runs.run_state(run_id, user_id=user_id):
        raise RunConflict("The run is not running any more.", RUN_FINISHED)
    return found[1]


async def answer(svc: Backend, *, user_id: int, run_id: str, clarify_id: str, answer: str) -> None:
    """Answer the run's open question (any text, or one of its choices) or its approval
    (one of the choices it offers: once, session, always, deny). `RunConflict` "not_open"
    when that question is not the open one (answered, or never asked)."""
    pause = await _going_run(svc, user_id=user_id, run_id=run_id)
    if pause is None or pause.clarify_id != clarify_id:
        raise RunConflict("That question is not open (already answered, or not asked).", NOT_OPEN)
    text = str(answer or "").strip()
    if not text:
        empty = "Choose an option or type an answer."
        raise InvalidRunInput(empty, {"answer": empty})
    if pause.kind == "approval":
        offered = [str(c) for c in json.loads(pause.choices_json or "[]")]
        if text not in offered:
            message = f"Answer a command's approval with one of: {', '.join(offered)}."
            raise InvalidRunInput(message, {"answer": "not one of the choices"})
    try:
        await svc.runs.answer(run_id, clarify_id, text, user_id=user_id)
    except BridgeError as exc:
        if exc.status_code == 404:  # answered meanwhile (another tab, a stop)
            raise RunConflict("That question was already answered.", NOT_OPEN) from exc
        raise


async def steer(svc: Backend, *, user_id: int, run_id: str, text: str) -> None:
    """Guidance for the run's working agent, which reads it with its next tool result (the
    same rules as a message)."""
    check_message(svc, text, field="text")
    await _going_run(svc, user_id=user_id, run_id=run_id)
    await svc.runs.steer(run_id, text, user_id=user_id)


async def stop(svc: Backend, *, user_id: int, run_id: str) -> None:
    """Stop the run (it ends `stopped`; a question it waits on is cancelled).
    `RunConflict` "run_finished" when it is over already."""
    await _going_run(svc, user_id=user_id, run_id=run_id)
    await svc.runs.stop(run_id, user_id=user_id)


# ---- the conversation's agent ---------------------------------------------------------------


async def reset_conversation(svc: Backend, *, user_id: int, session_uuid: str) -> None:
    """A fresh agent: later runs see nothing above the RESET marker (the messages stay).
    `Busy` while a run goes on."""
    chat = await conversation_for(svc, user_id=user_id, session_uuid=session_uuid)
    await refuse_while_running(
        svc, user_id=user_id, session_uuid=chat.session_uuid, action="Resetting the context"
    )
    await svc.runs.reset(user_id=user_id, session_uuid=chat.session_uuid)
