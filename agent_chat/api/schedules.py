"""Scheduled runs over the HTTP API: a person's prompt run at set times (cron in a time
zone, or a preset), paused, resumed, run now, and its history. Every route is the page's use
case (services/schedules.py, services/schedule_fire.py); a refused value is a 422 naming the
field, another person's schedule the 404 of a missing one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Path, Response

from agent_chat import routes
from agent_chat.api.deps import Backend, Me, Svc
from agent_chat.api.errors import ApiError, responses
from agent_chat.api.schedule_schemas import (
    FiringList,
    FiringOut,
    Preset,
    ScheduleCreate,
    ScheduleList,
    ScheduleOut,
    SchedulePatch,
)
from agent_chat.api.schemas import MAX_ID
from agent_chat.services import schedule_fire, schedule_times
from agent_chat.services import schedules as use
from agent_chat.services.schedules import When

if TYPE_CHECKING:
    from agent_chat.db.schedule_models import Schedule, ScheduleRun

router = APIRouter(tags=["schedules"])
ScheduleId = Path(..., ge=1, le=MAX_ID)


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(422, f"{field}: {message}", fields={field: message})


def _cron(cron: str | None, preset: Preset | None) -> str | None:
    """The cron expression given, or the preset's; None when neither is."""
    if cron is not None and preset is not None:
        raise _invalid("cron", "Give either cron or preset, not both.")
    if preset is None:
        return cron
    try:
        return schedule_times.preset_cron(
            preset.kind, time=preset.time, weekday=preset.weekday, minute=preset.minute
        )
    except schedule_times.ScheduleInvalid as exc:
        raise _invalid(exc.field, exc.message) from exc


def _out(row: Schedule, uuids: dict[int, str]) -> ScheduleOut:
    return ScheduleOut(
        id=row.id or 0,
        title=row.title,
        prompt=row.prompt,
        cron=row.cron,
        timezone=row.timezone,
        description=schedule_times.describe(row.cron),
        model_id=row.model_id,
        skill_folder=row.skill_folder,
        tool_profile=row.tool_profile,
        mode="append" if row.mode == "append" else "new",
        session_id=uuids.get(row.session_id) if row.session_id is not None else None,
        paused=row.paused,
        next_run_at=row.next_run_at,
        created_at=row.created_at,
    )


async def _one(svc: Backend, me: int, row: Schedule) -> ScheduleOut:
    return _out(row, await use.conversation_uuids(svc, user_id=me, session_ids=[row.session_id]))


def _firing(run: ScheduleRun, session_uuid: str | None, status: str | None) -> FiringOut:
    return FiringOut(
        id=run.id or 0,
        due_at=run.due_at,
        started_at=run.started_at,
        late=run.late,
        manual=run.manual,
        session_id=session_uuid,
        message_id=run.message_id,
        error=run.error,
        status=status,
    )


@router.get(routes.API_SCHEDULES, response_model=ScheduleList)
async def list_schedules(svc: Svc, me: Me) -> ScheduleList:
    """Your schedules, the next to fire first, paused ones last."""
    rows = await use.list_schedules(svc, user_id=me)
    uuids = await use.conversation_uuids(svc, user_id=me, session_ids=[r.session_id for r in rows])
    return ScheduleList(schedules=[_out(r, uuids) for r in rows])


@router.post(
    routes.API_SCHEDULES, status_code=201, response_model=ScheduleOut, responses=responses(422)
)
async def create_schedule(svc: Svc, me: Me, body: ScheduleCreate) -> ScheduleOut:
    """A new schedule: `prompt` run at the times of `cron` (or `preset`: exactly one of the
    two) in `timezone`, first at the next of them. Every value is checked now: a cron
    expression that cannot be read, never runs or runs more often than every 5 minutes, a
    time zone that does not exist, a model, skill or tool profile that is not there, or a
    conversation (`append`) that is not yours is a 422 naming the field."""
    cron = _cron(body.cron, body.preset)
    if cron is None:
        raise _invalid("cron", "Give cron or preset: when the schedule runs.")
    if body.mode == "new" and body.session_id is not None:
        raise _invalid("sessionId", "Only with mode append (the conversation to add to).")
    row = await use.create_schedule(
        svc,
        user_id=me,
        prompt=body.prompt,
        when=When(cron, body.timezone),
        title=body.title or "",
        model_id=body.model_id,
        skill_folder=body.skill_folder,
        tool_profile=body.tool_profile,
        mode=body.mode,
        session_uuid=body.session_id,
    )
    return await _one(svc, me, row)


@router.get(routes.API_SCHEDULE, response_model=ScheduleOut, responses=responses(404))
async def get_schedule(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> ScheduleOut:
    return await _one(svc, me, await use.get_schedule(svc, user_id=me, schedule_id=schedule_id))


@router.patch(routes.API_SCHEDULE, response_model=ScheduleOut, responses=responses(404))
async def update_schedule(
    svc: Svc, me: Me, body: SchedulePatch, schedule_id: int = ScheduleId
) -> ScheduleOut:
    """Change some fields, all or nothing (checked as when created). A new time (`cron`,
    `preset` or `timezone`) moves the next run to its next occurrence from now."""
    row = await use.get_schedule(svc, user_id=me, schedule_id=schedule_id)
    changes: dict[str, object] = {}
    for name in ("prompt", "title", "timezone", "mode"):
        value = getattr(body, name)
        if value is not None:
            changes[name] = value
    cron = _cron(body.cron, body.preset)
    if cron is not None:
        changes["cron"] = cron
    for name in ("model_id", "skill_folder", "tool_profile"):
        if name in body.model_fields_set:  # null is a value here: the default, none
            changes[name] = getattr(body, name)
    if body.session_id is not None and changes.get("mode", row.mode) != "append":
        raise _invalid("sessionId", "Only with mode append (the conversation to add to).")
    updated = await use.update_schedule(
        svc, user_id=me, schedule_id=schedule_id, changes=changes, session_uuid=body.session_id
    )
    return await _one(svc, me, updated)


@router.delete(
    routes.API_SCHEDULE, status_code=204, response_class=Response, responses=responses(404)
)
async def delete_schedule(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> Response:
    """Delete it and its history; the conversations it made stay."""
    await use.delete_schedule(svc, user_id=me, schedule_id=schedule_id)
    return Response(status_code=204)


@router.post(routes.API_SCHEDULE_PAUSE, response_model=ScheduleOut, responses=responses(404))
async def pause_schedule(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> ScheduleOut:
    """No firing until resumed (`nextRunAt` null); pausing a paused one changes nothing."""
    return await _one(svc, me, await use.pause_schedule(svc, user_id=me, schedule_id=schedule_id))


@router.post(routes.API_SCHEDULE_RESUME, response_model=ScheduleOut, responses=responses(404))
async def resume_schedule(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> ScheduleOut:
    """Fire again from the next occurrence after now (what fell due while paused does not
    run)."""
    row = await use.resume_schedule(svc, user_id=me, schedule_id=schedule_id)
    return await _one(svc, me, row)


@router.post(
    routes.API_SCHEDULE_RUN,
    status_code=201,
    response_model=FiringOut,
    responses=responses(404),
)
async def run_schedule(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> FiringOut:
    """Fire it now (paused or not; its next time stays): a firing, in its history, is
    created either way, so the answer is 201 either way. Started: `sessionId` and
    `messageId` name the conversation and the answer (follow it like any run). A firing
    that could not start (the model deleted, the conversation it adds to gone or busy, your
    limit of working runs reached) has `error`, the reason, and no conversation."""
    run = await schedule_fire.run_now(svc, user_id=me, schedule_id=schedule_id)
    infos = await use.schedule_history(svc, user_id=me, schedule_id=schedule_id)
    info = next((i for i in infos if i.run.id == run.id), None)
    if info is None:  # the schedule was deleted meanwhile
        return _firing(run, None, None)
    return _firing(info.run, info.session_uuid, info.status)


@router.get(routes.API_SCHEDULE_RUNS, response_model=FiringList, responses=responses(404))
async def schedule_runs(svc: Svc, me: Me, schedule_id: int = ScheduleId) -> FiringList:
    """Its firings, newest first (the last 50): when, where to, how the answer ended, or
    why it could not start."""
    infos = await use.schedule_history(svc, user_id=me, schedule_id=schedule_id)
    return FiringList(runs=[_firing(i.run, i.session_uuid, i.status) for i in infos])
