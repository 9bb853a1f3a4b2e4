"""Use cases on scheduled runs: a person's prompt run at set times by the run engine, so a
scheduled run is followed, answered and stored like any other (the page, the HTTP API and
the CLI call these; `services/schedule_fire.py` fires them).

Every value is checked at save time, with the field a client can act on: the prompt as a
message (`runs.check_message`), the model, skill and tool profile as a run's choices
(`runs.check_choices`), the cron expression and time zone by `services/schedule_times.py`
(which also refuses one firing more often than `MIN_INTERVAL`). Nothing half-saved: the
store writes in one transaction. What disappears later (a model, a skill, the conversation
it adds to) makes that firing fail with the reason, in the schedule's history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from agent_chat.db import schedules
from agent_chat.db.errors import ValidationFailed
from agent_chat.db.models import utcnow
from agent_chat.db.schedule_models import Schedule
from agent_chat.db.schedules import RunInfo
from agent_chat.services import schedule_times
from agent_chat.services.backend import Backend
from agent_chat.services.ids import row_id
from agent_chat.services.runs import check_choices, check_message
from agent_chat.services.schedule_times import ScheduleInvalid


@dataclass(frozen=True)
class When:
    """When a schedule fires: a cron expression (a preset's, or typed) in an IANA zone."""

    cron: str
    timezone: str


def _checked_when(when: When) -> When:
    try:
        zone = schedule_times.check_timezone(when.timezone)
        return When(schedule_times.check_cron(when.cron, zone), zone)
    except ScheduleInvalid as exc:
        raise ValidationFailed({exc.field: str(exc)}) from exc


def next_run(schedule: Schedule, after: datetime) -> datetime:
    """The schedule's first occurrence strictly after `after` (naive UTC)."""
    return schedule_times.next_after(schedule.cron, schedule.timezone, after)


async def create_schedule(
    svc: Backend,
    *,
    user_id: int,
    prompt: str,
    when: When,
    title: str = "",
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
    mode: str = "new",
    session_uuid: str | None = None,
    now: datetime | None = None,
) -> Schedule:
    """A new schedule; its first run is the first occurrence after `now`."""
    check_message(svc, prompt, field="prompt")
    checked = _checked_when(when)
    await check_choices(
        svc, model_id=model_id, skill_folder=skill_folder, tool_profile=tool_profile
    )
    first = schedule_times.next_after(checked.cron, checked.timezone, now or utcnow())
    return await svc.storage.call(
        schedules.create_schedule,
        user_id=user_id,
        title=title,
        prompt=prompt,
        cron=checked.cron,
        timezone=checked.timezone,
        next_run_at=first,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
        mode=mode,
        session_uuid=session_uuid,
    )


async def update_schedule(
    svc: Backend,
    *,
    user_id: int,
    schedule_id: int,
    changes: dict[str, object],
    session_uuid: str | None = None,
    now: datetime | None = None,
) -> Schedule:
    """Change some of: title, prompt, cron, timezone, model_id, skill_folder, tool_profile,
    mode (with `session_uuid` for "append"). A new time recomputes the next run from now."""
    schedule_id = row_id(schedule_id, "Schedule")
    row = await get_schedule(svc, user_id=user_id, schedule_id=schedule_id)
    changes = dict(changes)
    if "prompt" in changes:
        check_message(svc, str(changes["prompt"]), field="prompt")
    if "cron" in changes or "timezone" in changes:
        when = When(str(changes.get("cron", row.cron)), str(changes.get("timezone", row.timezone)))
        checked = _checked_when(when)
        changes.update(cron=checked.cron, timezone=checked.timezone)
        changes["next_run_at"] = schedule_times.next_after(
            checked.cron, checked.timezone, now or utcnow()
        )
    choices = {
        k: changes.get(k, getattr(row, k)) for k in ("model_id", "skill_folder", "tool_profile")
    }
    if any(k in changes for k in choices):
        await check_choices(svc, **choices)  # type: ignore[arg-type]
    return await svc.storage.call(
        schedules.update_schedule,
        user_id=user_id,
        schedule_id=schedule_id,
        changes=changes,
        session_uuid=session_uuid,
    )


async def get_schedule(svc: Backend, *, user_id: int, schedule_id: int) -> Schedule:
    """The person's schedule; another's is NotFound like a missing one."""
    schedule_id = row_id(schedule_id, "Schedule")
    return await svc.storage.call(schedules.get_schedule, user_id=user_id, schedule_id=schedule_id)


async def list_schedules(svc: Backend, *, user_id: int) -> list[Schedule]:
    """The person's schedules, the next to fire first, paused ones last."""
    return await svc.storage.call(schedules.list_schedules, user_id=user_id)


async def pause_schedule(svc: Backend, *, user_id: int, schedule_id: int) -> Schedule:
    schedule_id = row_id(schedule_id, "Schedule")
    return await svc.storage.call(
        schedules.set_paused, user_id=user_id, schedule_id=schedule_id, next_run_at=None
    )


async def resume_schedule(
    svc: Backend, *, user_id: int, schedule_id: int, now: datetime | None = None
) -> Schedule:
    """Resume: the next occurrence after now (what fell due while paused does not run)."""
    row = await get_schedule(svc, user_id=user_id, schedule_id=schedule_id)
    return await svc.storage.call(
        schedules.set_paused,
        user_id=user_id,
        schedule_id=row.id or 0,
        next_run_at=next_run(row, now or utcnow()),
    )


async def delete_schedule(svc: Backend, *, user_id: int, schedule_id: int) -> None:
    """Delete it and its history; the conversations it made stay."""
    schedule_id = row_id(schedule_id, "Schedule")
    await svc.storage.call(schedules.delete_schedule, user_id=user_id, schedule_id=schedule_id)


async def schedule_history(svc: Backend, *, user_id: int, schedule_id: int) -> list[RunInfo]:
    """Its firings, newest first: when, where to, and how the answer ended (or why none)."""
    schedule_id = row_id(schedule_id, "Schedule")
    return await svc.storage.call(schedules.history, user_id=user_id, schedule_id=schedule_id)


async def conversation_uuids(
    svc: Backend, *, user_id: int, session_ids: Iterable[int | None]
) -> dict[int, str]:
    """The uuids (as in URLs) of the person's conversations among `session_ids`: where an
    "append" schedule adds, where a firing went. One gone, or not theirs, is left out."""
    found: dict[int, str] = {}
    for chat_id in {i for i in session_ids if i is not None}:
        chat = await svc.storage.call(schedules.owned_chat, chat_id=chat_id, user_id=user_id)
        if chat is not None:
            found[chat_id] = chat.session_uuid
    return found
