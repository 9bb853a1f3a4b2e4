"""What the schedules page is sent (state/schedules.py): a schedule's row and its history's
rows, times in the browser's zone; and the form's fields, read into the `When` the use cases
take (a preset's cron from `services/schedule_times.py`, or the cron typed)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict
from zoneinfo import ZoneInfo

from agent_chat.db.errors import ValidationFailed
from agent_chat.services.runs import InvalidRunInput
from agent_chat.services.schedule_times import ScheduleInvalid, describe, preset_cron, preset_of
from agent_chat.services.schedules import When

if TYPE_CHECKING:  # the rows are read here, never stored
    from agent_chat.db.schedule_models import Schedule
    from agent_chat.db.schedules import Listed, RunInfo

DEFAULT_MODEL = "__default__"  # radix select items cannot have an empty value
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PRESETS = (
    ("hourly", "Hourly"),
    ("daily", "Daily at"),
    ("weekdays", "Weekdays at"),
    ("weekly", "Weekly on"),
    ("custom", "Custom (cron)"),
)
# The form's fields a refusal is shown under (the services' keys); others go under the form.
SHOWN = {
    "title": "title",
    "prompt": "prompt",
    "cron": "cron",
    "preset": "cron",
    "timezone": "timezone",
    "modelId": "model",
    "toolProfile": "profile",
    "mode": "mode",
    "sessionId": "mode",
}
OUTCOMES = {
    "RUNNING": "running",
    "SUCCESS": "answered",
    "FAILED": "failed",
    "STOPPED": "stopped",
}


class ScheduleRow(TypedDict):
    id: int
    title: str
    prompt: str
    when: str  # "Weekdays at 09:00 (Europe/Berlin)"
    next: str  # the next run in the browser's zone, "" while paused
    paused: bool
    where: str  # "A new conversation each time" / "Adds to “Weekly notes”"
    last: str  # the newest firing: "Answered · Mon 7 Dec, 09:00", "" before the first
    last_status: str  # its answer's status (RUNNING …), "ERROR" when it could not start
    last_uuid: str  # its conversation ("" without)
    target_uuid: str  # where an "append" schedule adds ("" for "new", or when it is gone)
    target_title: str


class HistoryRow(TypedDict):
    id: int
    when: str
    outcome: str
    bad: bool  # it failed or could not start
    uuid: str  # its conversation ("" without)


def local(moment: datetime | None, zone: str) -> str:
    """A naive UTC time as "Mon 7 Dec, 09:00" in `zone` (the browser's)."""
    if moment is None:
        return ""
    shown = moment.replace(tzinfo=UTC).astimezone(ZoneInfo(zone))
    return f"{shown:%a} {shown.day} {shown:%b}, {shown:%H:%M}"


def _outcome(info: RunInfo) -> tuple[str, str]:
    """(words, status) of a firing."""
    if info.run.error:
        return f"Could not start: {info.run.error}", "ERROR"
    if info.status is None:
        return "Its conversation was deleted", ""
    return OUTCOMES.get(info.status, info.status.lower()).capitalize(), info.status


def schedule_row(item: Listed, zone: str) -> ScheduleRow:
    row, last = item.schedule, item.last
    words, status = _outcome(last) if last else ("", "")
    if row.mode == "append":
        where = (
            f"Adds to “{item.target_title or 'New conversation'}”"
            if item.target_uuid
            else "Adds to a conversation that was deleted"
        )
    else:
        where = "A new conversation each time"
    return ScheduleRow(
        id=row.id or 0,
        title=row.title,
        prompt=row.prompt,
        when=f"{describe(row.cron)} ({row.timezone})",
        next=local(row.next_run_at, zone),
        paused=row.paused,
        where=where,
        last=f"{words} · {local(last.run.started_at, zone)}" if last else "",
        last_status=status,
        last_uuid=(last.session_uuid or "") if last else "",
        target_uuid=item.target_uuid or "",
        target_title=item.target_title,
    )


def history_row(info: RunInfo, zone: str) -> HistoryRow:
    words, status = _outcome(info)
    notes = [n for n, on in (("run now", info.run.manual), ("late", info.run.late)) if on]
    return HistoryRow(
        id=info.run.id or 0,
        when=local(info.run.started_at, zone) + (f" ({', '.join(notes)})" if notes else ""),
        outcome=words,
        bad=status in ("ERROR", "FAILED"),
        uuid=info.session_uuid or "",
    )


def blank_form(profile: str, zone: str) -> dict[str, str]:
    return {
        "title": "",
        "prompt": "",
        "preset": "weekdays",
        "time": "09:00",
        "weekday": "0",
        "minute": "0",
        "cron": "",
        "timezone": zone,
        "model": DEFAULT_MODEL,
        "profile": profile,
        "mode": "new",
        "conversation": "",
        "conversation_title": "",
    }


def edit_form(row: Schedule, target_uuid: str, target_title: str) -> dict[str, str]:
    kind, time, weekday, minute = preset_of(row.cron)
    return {
        "title": row.title,
        "prompt": row.prompt,
        "preset": kind,
        "time": time,
        "weekday": str(weekday),
        "minute": str(minute),
        "cron": row.cron,
        "timezone": row.timezone,
        "model": str(row.model_id) if row.model_id is not None else DEFAULT_MODEL,
        "profile": row.tool_profile or "",
        "mode": row.mode if target_uuid or row.mode == "new" else "new",
        "conversation": target_uuid,
        "conversation_title": target_title,
        "timezone_typed": "1",
    }


def when_of(form: dict[str, str]) -> When:
    """The form's time as a `When`; ValidationFailed (key "cron") for a preset it cannot make."""
    kind = form.get("preset", "weekdays")
    zone = form.get("timezone", "").strip()
    if kind == "custom":
        return When(form.get("cron", "").strip(), zone)
    minute = form.get("minute", "0").strip()
    if kind == "hourly" and not (minute.isdigit() and int(minute) <= 59):
        raise ValidationFailed({"cron": "Choose a minute from 0 to 59."})
    weekday = form.get("weekday", "0")
    try:
        cron = preset_cron(
            kind,
            time=form.get("time", "").strip(),
            weekday=int(weekday) if weekday.isdigit() else -1,
            minute=int(minute) if minute.isdigit() else 0,
        )
    except ScheduleInvalid as exc:
        raise ValidationFailed({"cron": exc.message}) from exc
    return When(cron, zone)


def field_messages(exc: ValidationFailed) -> tuple[dict[str, str], str]:
    """A refusal as (form field → message, what no field shows). A run's choice refused
    (`InvalidRunInput`: a model, profile or prompt) says its one sentence."""
    fields: dict[str, str] = {}
    rest: list[str] = []
    for key, message in exc.field_errors.items():
        said = str(exc) if isinstance(exc, InvalidRunInput) else message
        if key in SHOWN:
            fields[SHOWN[key]] = said
        else:
            rest.append(said)
    return fields, " ".join(rest)
