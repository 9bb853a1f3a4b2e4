"""Runs (seed 000 §4.2.2): start one, its state, answer its question, stop it. The stream
is `stream.py`. Every command is the page's RunManager command (state/live.py)."""

from __future__ import annotations

from collections.abc import Awaitable

from fastapi import APIRouter

from agent_chat import routes
from agent_chat.api.deps import Backend, Me, Svc
from agent_chat.api.errors import ApiError, not_found, responses
from agent_chat.api.schemas import Accepted, ResumeBody, RunCreate, RunStarted, RunStateOut
from agent_chat.api.sessions import require_session, usable_skills
from agent_chat.api.views import pending_out
from agent_chat.db import api_reads, model_configs
from agent_chat.db.messages import active_branch
from agent_chat.db.models import MessageStatus
from agent_chat.db.running import RUN_ACTIVE, STILL_RUNNING, TOO_MANY_RUNS, too_many_runs
from agent_chat.protocol.events import RunState
from agent_chat.runs.client import BridgeError
from agent_chat.runs.manager import RunRefused, StartedRun

router = APIRouter(tags=["runs"])

FINAL_STATES = {
    MessageStatus.SUCCESS.value: RunState.SUCCEEDED,
    MessageStatus.FAILED.value: RunState.FAILED,
    MessageStatus.STOPPED.value: RunState.STOPPED,
}


def check_message(svc: Backend, text: str, field: str = "message") -> None:
    """The page's message rules, with the status a client expects (422 empty, 413 long)."""
    limit = svc.settings.max_message_chars
    if len(text) > limit:
        raise ApiError(
            413,
            f"The message has {len(text):,} characters; the limit is {limit:,}.",
            code="message_too_long",
            fields={field: f"at most {limit:,} characters"},
        )
    try:
        svc.runs.validate_message(text)
    except RunRefused as exc:
        raise ApiError(422, str(exc), fields={field: str(exc)}) from exc


async def check_can_start(svc: Backend, session_uuid: str, me: int) -> None:
    """409 while the conversation runs, 429 at the person's run limit, on any worker
    (RunManager checks again)."""
    if await svc.runs.running_in(session_uuid, user_id=me):
        raise refused(RunRefused(STILL_RUNNING, RUN_ACTIVE))
    working = await svc.runs.working_runs(user_id=me)
    if working >= svc.settings.max_active_runs:
        limit = svc.settings.max_active_runs
        raise refused(RunRefused(too_many_runs(working, limit), TOO_MANY_RUNS))


def refused(exc: RunRefused) -> ApiError:
    """429 (retry later) at the person's run limit, 409 for every other refusal: the same
    whether this check, the manager's or the turn's transaction (several workers) said so."""
    if exc.code == TOO_MANY_RUNS:
        return ApiError(429, str(exc), code=TOO_MANY_RUNS, headers={"Retry-After": "5"})
    return ApiError(409, str(exc), code=exc.code)


async def started(command: Awaitable[StartedRun], *, new_version: str) -> RunStarted:
    try:
        run = await command
    except RunRefused as exc:
        raise refused(exc) from exc
    new_id = run.user_message_id if new_version == "user" else run.assistant_message_id
    return RunStarted(
        run_id=run.run_id,
        message_id=run.assistant_message_id,
        user_message_id=run.user_message_id,
        new_message_id=new_id,
    )


@router.post(
    routes.API_SESSION_RUNS,
    status_code=201,
    response_model=RunStarted,
    responses=responses(404, 409, 413, 429),
)
async def start_run(svc: Svc, me: Me, session_id: str, body: RunCreate) -> RunStarted:
    """Ask: the message joins the active branch and a run answers it (follow it with the
    stream). `parentMessageId`, if given, must be the branch's last message."""
    chat = await require_session(svc, session_id, me)
    check_message(svc, body.message)
    if body.model_id is not None:
        model = await svc.storage.call(model_configs.get_model, model_id=body.model_id)
        if model is None:
            raise ApiError(
                422, f"There is no model {body.model_id}.", fields={"modelId": "unknown"}
            )
    if body.skill_folder is not None and body.skill_folder not in usable_skills(svc):
        raise ApiError(
            422,
            f"There is no usable skill {body.skill_folder!r}.",
            fields={"skillFolder": "unknown"},
        )
    if body.tool_profile is not None and body.tool_profile not in svc.settings.tool_profiles:
        raise ApiError(
            422,
            f"The tool profile {body.tool_profile!r} is not enabled here.",
            fields={"toolProfile": "not enabled"},
        )
    await check_can_start(svc, session_id, me)
    if body.parent_message_id is not None:
        branch = await svc.storage.call(active_branch, chat_session_id=chat.id)
        leaf = branch[-1].id if branch else None
        if body.parent_message_id != leaf:
            raise ApiError(
                409,
                f"Message {body.parent_message_id} is not the end of the active branch "
                f"(that is {leaf}): activate its version first, or edit a message.",
                code="not_branch_end",
            )
    return await started(
        svc.runs.send(
            user_id=me,
            session_uuid=session_id,
            text=body.message,
            model_id=body.model_id,
            skill_folder=body.skill_folder,
            tool_profile=body.tool_profile,
            max_iterations=body.max_iterations,
        ),
        new_version="assistant",
    )


async def require_run(svc: Backend, run_id: str, me: int) -> api_reads.RunInfo:
    """`me`'s run; 404 when it is unknown or another person's (the same answer)."""
    info = await svc.storage.call(api_reads.run_info, run_id=run_id, user_id=me)
    if info is None:
        raise not_found(f"Run {run_id!r}")
    return info


def run_status(info: api_reads.RunInfo, going: str) -> RunState:
    """`going`: the manager's `run_state` ("running", "waiting" or "")."""
    if going:  # consumed by this worker or another
        return RunState.WAITING_INPUT if going == "waiting" else RunState.RUNNING
    if info.message.status in FINAL_STATES:
        return FINAL_STATES[info.message.status]
    # Stored as running but not followed here (the app is re-attaching): still going.
    return RunState.WAITING_INPUT if info.pause is not None else RunState.RUNNING


@router.get(routes.API_RUN_STATE, response_model=RunStateOut, responses=responses(404))
async def run_state(svc: Svc, me: Me, run_id: str) -> RunStateOut:
    """The run's status and its pending question (or approval), e.g. after a reconnect."""
    info = await require_run(svc, run_id, me)
    going = await svc.runs.run_state(run_id, user_id=me)
    status = run_status(info, going)
    live = bool(going)
    return RunStateOut(
        run_id=run_id,
        session_id=info.session_uuid,
        message_id=info.message.id,
        status=status.value,
        live=live,
        last_event_id=info.last_seq,
        error=info.message.error,
        pending=pending_out(info.pause) if info.pause and live else None,
    )


@router.post(
    routes.API_RUN_RESUME, status_code=202, response_model=Accepted, responses=responses(404, 409)
)
async def resume_run(svc: Svc, me: Me, run_id: str, body: ResumeBody) -> Accepted:
    """Answer the run's pending question (`clarifyId` from the state or the stream)."""
    info = await require_run(svc, run_id, me)
    if not await svc.runs.run_state(run_id, user_id=me):
        raise ApiError(409, "The run is not running any more.", code="run_finished")
    if info.pause is None or info.pause.clarify_id != body.clarify_id:
        raise ApiError(
            409, "That question is not open (already answered, or not asked).", code="not_open"
        )
    try:
        await svc.runs.answer(
            run_id, body.clarify_id, body.answer.strip() or body.answer, user_id=me
        )
    except BridgeError as exc:
        if exc.status_code == 404:
            raise ApiError(409, "That question was already answered.", code="not_open") from exc
        raise
    return Accepted(run_id=run_id, status="answered")


@router.post(
    routes.API_RUN_STOP, status_code=202, response_model=Accepted, responses=responses(404, 409)
)
async def stop_run(svc: Svc, me: Me, run_id: str) -> Accepted:
    """Stop the run; the stream ends with `run_stopped`."""
    await require_run(svc, run_id, me)
    if not await svc.runs.run_state(run_id, user_id=me):
        raise ApiError(409, "The run is not running any more.", code="run_finished")
    await svc.runs.stop(run_id, user_id=me)
    return Accepted(run_id=run_id, status="stopping")
