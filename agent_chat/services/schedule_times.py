"""The time rules of scheduled agent runs ("every weekday at 09:00 in Europe/Berlin"): which
cron expressions and time zones a schedule may have, the presets the page offers, their words,
and the next run. Plain Python: croniter reads and steps the cron, zoneinfo knows the zones.
Every datetime taken or returned is naive UTC, as the database stores it.

Daylight saving time. A schedule means its zone's wall clock, so the cron is stepped in naive
local time and each wall time is then mapped to UTC the way Python's `fold=0` does:

- a wall time that does not exist (spring forward: 02:30 on the last Sunday of March in
  Europe/Berlin) runs with the offset from before the change: 02:30+01:00 = 01:30 UTC, which
  the clocks show as 03:30; so it runs once, shortly after the change;
- a wall time that occurs twice (fall back: 02:30 on the last Sunday of October) runs once,
  at its first occurrence (02:30+02:00 = 00:30 UTC);
- the next run is always strictly after the instant asked about, so an instant two wall
  times map to (an hourly schedule's 02:00, which does not exist, and 03:00 are both 01:00
  UTC on the spring day) runs once.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, available_timezones

from croniter import CroniterBadDateError, CroniterError, croniter

MIN_INTERVAL = timedelta(minutes=5)
MAX_TIMEZONE_LENGTH = 64
MAX_CRON_LENGTH = 100
# Enough occurrences to see a whole day of the busiest allowed schedule (288 a day at one per
# 5 minutes) and so every gap its minute and hour fields make; a year bounds the rare ones.
GAP_SAMPLES = 500
GAP_HORIZON = timedelta(days=366)

ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
# (name, allowed values) of the five fields, to say which one croniter refused.
FIELDS = (
    ("minute", "0–59"),
    ("hour", "0–23"),
    ("day of month", "1–31"),
    ("month", "1–12 or JAN–DEC"),
    ("day of week", "0–7 or SUN–SAT"),
)
PRESETS = ("hourly", "daily", "weekdays", "weekly")
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
# Names a zone file has that are no place: "localtime" is whatever the host is set to.
NOT_PLACES = frozenset({"localtime", "posixrules"})
_TIME = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
_NUMBER = re.compile(r"\d{1,2}")


class ScheduleInvalid(ValueError):
    """A schedule the person has to change; `field` is the form field at fault ("cron",
    "timezone" or "preset") and the message a sentence the page shows as it is."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@functools.cache
def _zone_names() -> frozenset[str]:
    # Scans the zone files once; ZoneInfo alone would also load "Europe" (a folder) or
    # whatever file the host has under a name.
    return frozenset(available_timezones()) - NOT_PLACES


def check_timezone(name: str) -> str:
    """`name` when it is an IANA time zone ("Europe/Berlin", "UTC")."""
    if not isinstance(name, str) or not name.strip():
        raise ScheduleInvalid("timezone", "Choose a time zone, e.g. “Europe/Berlin”.")
    if len(name) > MAX_TIMEZONE_LENGTH:
        raise ScheduleInvalid(
            "timezone",
            f"“{name[:24]}…” is too long for a time zone name "
            f"(at most {MAX_TIMEZONE_LENGTH} characters).",
        )
    if name not in _zone_names():
        raise ScheduleInvalid(
            "timezone", f"“{name}” is not a time zone; use a name like “Europe/Berlin”."
        )
    return name


def _fields(expr: str) -> list[str]:
    """The five fields of `expr` (an alias expanded), or the refusal of its shape."""
    if not isinstance(expr, str) or not expr.strip():
        raise ScheduleInvalid("cron", "Enter a cron expression, e.g. “0 9 * * 1-5”.")
    if len(expr) > MAX_CRON_LENGTH:
        raise ScheduleInvalid(
            "cron", f"A cron expression has at most {MAX_CRON_LENGTH} characters."
        )
    parts = expr.split()
    if len(parts) == 1 and parts[0].startswith("@"):
        alias = parts[0].lower()
        if alias == "@reboot":
            raise ScheduleInvalid(
                "cron", "“@reboot” runs when a machine starts, not at a time of day."
            )
        if alias not in ALIASES:
            known = ", ".join(sorted(ALIASES))
            raise ScheduleInvalid("cron", f"“{parts[0]}” is not one of {known}.")
        return ALIASES[alias].split()
    if len(parts) > 5:
        raise ScheduleInvalid(
            "cron",
            f"“{expr.strip()}” has {len(parts)} fields, but seconds and years are not "
            "supported: use the five fields minute, hour, day of month, month, day of week.",
        )
    if len(parts) < 5:
        raise ScheduleInvalid(
            "cron",
            f"“{expr.strip()}” has {len(parts)} field{'s' if len(parts) != 1 else ''}; a cron "
            "expression has five: minute, hour, day of month, month, day of week.",
        )
    return parts


def _croniter_refusal(parts: list[str], exc: Exception) -> ScheduleInvalid:
    """croniter's refusal as a sentence naming the field at fault: its own messages repeat
    the expression and speak of "bands" and `range()` arguments."""
    for index, (name, allowed) in enumerate(FIELDS):
        alone = ["*"] * 5
        alone[index] = parts[index]
        try:
            croniter(" ".join(alone))
        except (CroniterError, ValueError):
            return ScheduleInvalid(
                "cron", f"The {name} field “{parts[index]}” is not valid (it takes {allowed})."
            )
    reason = re.sub(r"^\[.*?\]\s*", "", str(exc)).strip().rstrip(".") or "it cannot be read"
    return ScheduleInvalid("cron", f"“{' '.join(parts)}” is not valid: {reason}.")


def check_cron(expr: str, tz: str) -> str:
    """The five-field form of `expr` ("0 9 * * 1-5"), or `ScheduleInvalid` saying what to
    change: the shape, a field croniter refuses, never running, or running too often."""
    parts = _fields(expr)
    zone = ZoneInfo(check_timezone(tz))
    cron = " ".join(parts)
    # The gaps are measured on the zone's wall clock, from now: they are the expression's.
    # A clock change can bring two runs nearer once a year (the spring hour is skipped).
    now = datetime.now(zone).replace(tzinfo=None, second=0, microsecond=0)
    try:
        steps = croniter(cron, now)
    except (CroniterError, ValueError) as exc:
        raise _croniter_refusal(parts, exc) from exc
    try:
        first = previous = steps.get_next(datetime)
    except CroniterBadDateError as exc:
        raise ScheduleInvalid("cron", f"“{cron}” never runs: no date matches it.") from exc
    smallest: timedelta | None = None
    for _ in range(GAP_SAMPLES - 1):
        current = steps.get_next(datetime)
        if current - first > GAP_HORIZON:
            break
        gap = current - previous
        smallest = gap if smallest is None else min(smallest, gap)
        previous = current
    if smallest is not None and smallest < MIN_INTERVAL:
        minutes = int(smallest.total_seconds() // 60)
        raise ScheduleInvalid(
            "cron",
            f"“{cron}” runs {minutes} minute{'s' if minutes != 1 else ''} apart; a schedule "
            f"may run at most every {int(MIN_INTERVAL.total_seconds() // 60)} minutes.",
        )
    return cron


def _preset_time(time: str) -> tuple[int, int]:
    match = _TIME.fullmatch(time) if isinstance(time, str) else None
    if match is None:
        raise ScheduleInvalid("preset", f"“{time}” is not a time of day; write it as HH:MM.")
    return int(match[1]), int(match[2])


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def preset_cron(kind: str, *, time: str = "09:00", weekday: int = 0, minute: int = 0) -> str:
    """The cron of a preset the page offers. `weekday` counts from 0 = Monday (as Python's
    `date.weekday()`), cron from 0 = Sunday; only the arguments `kind` uses are read."""
    if kind not in PRESETS:
        raise ScheduleInvalid("preset", f"“{kind}” is not one of {', '.join(PRESETS)}.")
    if kind == "hourly":
        if not _whole(minute, 0, 59):
            raise ScheduleInvalid("preset", f"The minute {minute!r} is not within 0–59.")
        return f"{minute} * * * *"
    hour, minute_of_hour = _preset_time(time)
    if kind == "daily":
        return f"{minute_of_hour} {hour} * * *"
    if kind == "weekdays":
        return f"{minute_of_hour} {hour} * * 1-5"
    if not _whole(weekday, 0, 6):
        raise ScheduleInvalid(
            "preset", f"The weekday {weekday!r} is not within 0 (Monday) to 6 (Sunday)."
        )
    return f"{minute_of_hour} {hour} * * {(weekday + 1) % 7}"


def _number(field: str, highest: int) -> bool:
    return _NUMBER.fullmatch(field) is not None and int(field) <= highest


def describe(cron: str) -> str:
    """Words for the schedule list: the presets' shapes in words, anything else as cron."""
    parts = cron.split()
    if len(parts) == 1 and parts[0].lower() in ALIASES:
        parts = ALIASES[parts[0].lower()].split()
    shown = " ".join(parts)
    if len(parts) != 5 or parts[2:4] != ["*", "*"] or not _number(parts[0], 59):
        return f"Cron: {shown}"
    minute, hour, _, _, weekday = parts
    if hour == "*" and weekday == "*":
        return f"Every hour at :{int(minute):02d}"
    if not _number(hour, 23):
        return f"Cron: {shown}"
    at = f"{int(hour):02d}:{int(minute):02d}"
    if weekday == "*":
        return f"Every day at {at}"
    if weekday == "1-5":
        return f"Weekdays at {at}"
    if _number(weekday, 7):
        return f"Every {DAY_NAMES[int(weekday) % 7]} at {at}"
    return f"Cron: {shown}"


def _wall(zone: ZoneInfo, instant: datetime) -> datetime:
    """The zone's naive wall time at a naive UTC instant (its fold is dropped)."""
    return instant.replace(tzinfo=UTC).astimezone(zone).replace(tzinfo=None)


def _instant(zone: ZoneInfo, wall: datetime) -> datetime:
    """The naive UTC instant of a wall time, by `fold=0`: a skipped time takes the offset
    from before the change, a repeated one its first occurrence."""
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC).replace(tzinfo=None)


def _offset_spread(zone: ZoneInfo, instant: datetime) -> timedelta:
    """How far the zone's offset moves within a day either side of `instant`: zero but
    near a clock change, where wall time and UTC are no longer in step."""
    offsets = [
        (instant + timedelta(days=days)).replace(tzinfo=UTC).astimezone(zone).utcoffset()
        for days in (-1, 0, 1)
    ]
    return max(offsets) - min(offsets)


def next_after(cron: str, tz: str, after: datetime) -> datetime:
    """The first run of `cron` in zone `tz` strictly after `after` (naive UTC), naive UTC."""
    zone = ZoneInfo(check_timezone(tz))
    if after.tzinfo is not None:
        after = after.astimezone(UTC).replace(tzinfo=None)
    # Near a spring change a skipped wall time runs later in UTC than the wall times just
    # after it, so the walk starts earlier by the change; the minute more makes croniter's
    # "strictly after the start" include a run at the start itself. Runs at or before
    # `after` are passed over, which also covers an `after` in the repeated autumn hour.
    start = _wall(zone, after) - _offset_spread(zone, after) - timedelta(minutes=1)
    try:
        steps = croniter(cron, start.replace(second=0, microsecond=0))
    except (CroniterError, ValueError) as exc:
        raise _croniter_refusal(_fields(cron), exc) from exc
    best: datetime | None = None
    until: datetime | None = None
    while True:
        try:
            wall = steps.get_next(datetime)
        except CroniterBadDateError as exc:
            raise ScheduleInvalid("cron", f"“{cron}” never runs: no date matches it.") from exc
        if until is not None and wall > until:
            return best
        instant = _instant(zone, wall)
        if instant <= after or (best is not None and instant >= best):
            continue
        best = instant
        if until is None:
            # A later wall time maps to an earlier instant only within a clock change.
            until = wall + _offset_spread(zone, instant)


def preset_of(cron: str) -> tuple[str, str, int, int]:
    """The page's preset a cron is, as (kind, "HH:MM", weekday from 0 = Monday, minute), for
    an edit form; ("custom", "09:00", 0, 0) when it is none of them (`preset_cron`'s inverse)."""
    parts = cron.split()
    custom = ("custom", "09:00", 0, 0)
    if len(parts) != 5 or parts[2:4] != ["*", "*"] or not _number(parts[0], 59):
        return custom
    minute, hour, _, _, weekday = parts
    if hour == "*":
        return ("hourly", "09:00", 0, int(minute)) if weekday == "*" else custom
    if not _number(hour, 23):
        return custom
    at = f"{int(hour):02d}:{int(minute):02d}"
    if weekday == "*":
        return ("daily", at, 0, 0)
    if weekday == "1-5":
        return ("weekdays", at, 0, 0)
    if _number(weekday, 7):
        return ("weekly", at, (int(weekday) + 6) % 7, 0)
    return custom
