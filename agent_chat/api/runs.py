"""Runs: start one, its state, answer its question, stop it. The stream
is `stream.py`. Every command is the page's use case (services/runs.py, also state/live.py);
`refusals` gives its refusals the status and code a client acts on."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Iterator

from fastapi import APIRouter

from agent_chat import routes
from agent_chat.api.deps import Backend, Me, Svc
from agent_chat.api.errors import ApiError, not_found, responses
from agent_chat.api.schemas import Accepted, ResumeBody, RunCreate, RunStarted, RunStateOut
from agent_chat.api.views import pending_out
from agent_chat.db.models import MessageStatus
from agent_chat.protocol.events import RunState
from agent_chat.runs.manager import RunRefused, StartedRun
from agent_chat.services import run_logs
from agent_chat.services import runs as use
from agent_chat.services.run_logs import RunInfo
from agent_chat.services.runs import MESSAGE_TOO_LONG, TOO_MANY_RUNS, InvalidRunInput, RunConflict

router = APIRouter(tags=["runs"])

FINAL_STATES = {
    MessageStatus.SUCCESS.value: RunState.SUCCEEDED,
    MessageStatus.FAILED.value: RunState.FAILED,
    MessageStatus.STOPPED.value: RunState.STOPPED,
}


def refused(exc: RunRefused) -> ApiError:
    """429 (retry later) at the person's run limit, 409 for every other refusal: the same
    whether the use case's check, the manager's or the turn's transaction (several workers)
    said so."""
    if exc.code == TOO_MANY_RUNS:
        return ApiError(429, str(exc), code=TOO_MANY_RUNS, headers={"Retry-After": "5"})
    return ApiError(409, str(exc), code=exc.code)


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """A run use case's refusals that carry a code (api/errors.py maps the rest: NotFound,
    UnknownRun 404, Busy 409, ValidationFailed 422): a too long message is 413."""
    try:
        yield
    except RunRefused as exc:
        raise refused(exc) from exc
    except InvalidRunInput as exc:
        status = 413 if exc.code == MESSAGE_TOO_LONG else 422
        raise ApiError(status, str(exc), code=exc.code, fields=exc.field_errors) from exc
    except RunConflict as exc:
        raise ApiError(409, str(exc), code=exc.code) from exc


async def started(command: Awaitable[StartedRun], *, new_version: str) -> RunStarted:
    with refusals():
        run = await command
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
    stream). `parentMessageId`, if given, must be the branch's last message;
    `attachmentIds`, your uploads the message carries (at most 10; another's is a 422, like a missing one)."""
    return await started(
        use.start_run(
            svc,
            user_id=me,
            session_uuid=session_id,
            text=body.message,
            model_id=body.model_id,
            skill_folder=body.skill_folder,
            tool_profile=body.tool_profile,
            max_iterations=body.max_iterations,
            parent_message_id=body.parent_message_id,
            attachment_ids=body.attachment_ids,
        ),
        new_version="assistant",
    )


async def require_run(svc: Backend, run_id: str, me: int) -> RunInfo:
    """`me`'s run; 404 when it is unknown or another person's (the same answer)."""
    info = await run_logs.run_info(svc, user_id=me, run_id=run_id)
    if info is None:
        raise not_found(f"Run {run_id!r}")
    return info


def run_status(info: RunInfo, going: str) -> RunState:
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
    with refusals():
        await use.answer(
            svc, user_id=me, run_id=run_id, clarify_id=body.clarify_id, answer=body.answer
        )
    return Accepted(run_id=run_id, status="answered")


@router.post(
    routes.API_RUN_STOP, status_code=202, response_model=Accepted, responses=responses(404, 409)
)
async def stop_run(svc: Svc, me: Me, run_id: str) -> Accepted:
    """Stop the run; the stream ends with `run_stopped`."""
    with refusals():
        await use.stop(svc, user_id=me, run_id=run_id)
    return Accepted(run_id=run_id, status="stopping")
