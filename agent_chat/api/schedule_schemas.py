"""The request and response bodies of scheduled runs (`api/schedules.py`), in camelCase with
a bound on every field, as `api/schemas.py`'s. What a schema cannot say (a cron expression
that never runs or runs too often, a time zone that does not exist, a model that is not
there) is the use case's 422 naming the field."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_chat.api.schemas import MAX_ID, Body, Out, Timestamp
from agent_chat.services.schedule_times import MAX_CRON_LENGTH, MAX_TIMEZONE_LENGTH, PRESETS

MAX_SCHEDULE_TITLE = 120  # the store's limit (a schedule's title column)
# A sanity bound; the app's own message limit (AGENT_CHAT_MAX_MESSAGE_CHARS, 100,000 by
# default) is the use case's check, a 422 on `prompt`.
MAX_PROMPT_CHARS = 1_000_000
MAX_SESSION_ID = 64

PresetKind = Literal["hourly", "daily", "weekdays", "weekly"]
assert set(PresetKind.__args__) == set(PRESETS)  # type: ignore[attr-defined]
Mode = Literal["new", "append"]
_PROMPT = "The message sent at each firing (the same size limit as a message)."
_TIMEZONE = "An IANA time zone, e.g. `Europe/Berlin`: the times are its wall-clock times."
_CRON = (
    "Five fields (minute, hour, day of month, month, day of week) or an alias such as "
    "`@daily`, at most once every 5 minutes; or give `preset` instead."
)
_SESSION = "mode `append`: the conversation (its UUID) each firing adds to."


class Preset(Body):
    """One of the page's presets, turned into a cron expression."""

    kind: PresetKind
    time: str = Field(
        default="09:00",
        pattern=r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$",
        max_length=5,
        description="daily, weekdays, weekly: the time of day, HH:MM.",
    )
    weekday: int = Field(default=0, ge=0, le=6, description="weekly: 0 Monday … 6 Sunday.")
    minute: int = Field(default=0, ge=0, le=59, description="hourly: the minute of each hour.")


class ScheduleCreate(Body):
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS, description=_PROMPT)
    title: str | None = Field(
        default=None,
        max_length=MAX_SCHEDULE_TITLE,
        description="Names the schedule and the conversations it makes (left out or blank: "
        "the prompt's first words).",
    )
    cron: str | None = Field(
        default=None, min_length=1, max_length=MAX_CRON_LENGTH, description=_CRON
    )
    preset: Preset | None = Field(default=None, description="Instead of `cron`.")
    timezone: str = Field(min_length=1, max_length=MAX_TIMEZONE_LENGTH, description=_TIMEZONE)
    model_id: int | None = Field(
        default=None, ge=1, le=MAX_ID, description="null: the default model when it fires."
    )
    skill_folder: str | None = Field(default=None, max_length=200)
    tool_profile: str | None = Field(
        default=None, max_length=40, description="`chat` or `workspace` (those enabled)."
    )
    mode: Mode = Field(
        default="new",
        description="`new`: a conversation each time, titled with the date; `append`: "
        "into the conversation `sessionId`.",
    )
    session_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_SESSION_ID, description=_SESSION
    )


class SchedulePatch(Body):
    """Only the fields sent change; null or left out leaves a field as it is, but for
    `modelId`, `skillFolder` and `toolProfile`, where null is a value (the default, none)."""

    prompt: str | None = Field(
        default=None, min_length=1, max_length=MAX_PROMPT_CHARS, description=_PROMPT
    )
    title: str | None = Field(default=None, max_length=MAX_SCHEDULE_TITLE)
    cron: str | None = Field(
        default=None, min_length=1, max_length=MAX_CRON_LENGTH, description=_CRON
    )
    preset: Preset | None = Field(default=None, description="Instead of `cron`.")
    timezone: str | None = Field(
        default=None, min_length=1, max_length=MAX_TIMEZONE_LENGTH, description=_TIMEZONE
    )
    model_id: int | None = Field(
        default=None, ge=1, le=MAX_ID, description="null: the default model when it fires."
    )
    skill_folder: str | None = Field(default=None, max_length=200, description="null: none.")
    tool_profile: str | None = Field(
        default=None, max_length=40, description="null: the conversation's profile."
    )
    mode: Mode | None = None
    session_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_SESSION_ID, description=_SESSION
    )


class ScheduleOut(Out):
    id: int
    title: str
    prompt: str
    cron: str = Field(description="The five-field form.")
    timezone: str
    description: str = Field(description="When it runs, in words (“Weekdays at 09:00”).")
    model_id: int | None
    skill_folder: str | None
    tool_profile: str | None
    mode: Mode
    session_id: str | None = Field(
        description="mode `append`: the conversation's UUID (null once it is deleted); "
        "mode `new`: null."
    )
    paused: bool
    next_run_at: Timestamp | None = Field(description="UTC; null while paused.")
    created_at: Timestamp


class ScheduleList(Out):
    schedules: list[ScheduleOut] = Field(description="The next to fire first, paused last.")


class FiringOut(Out):
    """One firing: where it went (its conversation and answer) or why it could not start."""

    id: int
    due_at: Timestamp = Field(description="The occurrence it stands for (run now: the time).")
    started_at: Timestamp
    late: bool = Field(description="It ran after an occurrence the app was down for.")
    manual: bool = Field(description="Run now, not a scheduled time.")
    session_id: str | None = Field(
        description="The conversation's UUID; null when it could not start (or was deleted)."
    )
    message_id: int | None = Field(description="The answer (assistant message); null without.")
    error: str | None = Field(description="Why it could not start; null when it started.")
    status: str | None = Field(
        default=None,
        description="The answer's status now (RUNNING, SUCCESS, FAILED, STOPPED); null "
        "without an answer.",
    )


class FiringList(Out):
    runs: list[FiringOut] = Field(description="Newest first (the last 50).")
