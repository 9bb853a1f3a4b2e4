"""The time rules of scheduled runs (services/schedule_times.py): which crons and zones are
accepted, the presets and their words, and the next run across daylight saving changes. In
2027 Europe/Berlin springs forward on 28 March (02:00 → 03:00) and falls back on 31 October
(03:00 → 02:00); America/New_York on 14 March and 7 November."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_chat.services.schedule_times import (
    MIN_INTERVAL,
    ScheduleInvalid,
    check_cron,
    check_timezone,
    describe,
    next_after,
    preset_cron,
)

BERLIN = "Europe/Berlin"
HOUR = timedelta(hours=1)


def runs(cron: str, tz: str, after: datetime, until: datetime) -> list[datetime]:
    """Every run in (after, until], found the way a scheduler does: one after the other."""
    found = []
    while (after := next_after(cron, tz, after)) <= until:
        found.append(after)
    return found


def local(instant: datetime, tz: str) -> datetime:
    return instant.replace(tzinfo=UTC).astimezone(ZoneInfo(tz))


def test_a_weekday_schedule_runs_at_nine_on_weekdays_only_in_winter_and_summer() -> None:
    for monday, utc_hour in ((datetime(2027, 1, 4), 8), (datetime(2027, 7, 5), 7)):
        found = runs("0 9 * * 1-5", BERLIN, monday - HOUR * 12, monday + timedelta(days=14))
        assert found[0] == monday.replace(hour=utc_hour)
        assert len(found) == 10
        assert {r.weekday() for r in found} == {0, 1, 2, 3, 4}
        assert all(r.hour == utc_hour and r.minute == 0 for r in found)
        assert all(local(r, BERLIN).hour == 9 for r in found)


def _one_run_per_local_date(found: list[datetime], tz: str) -> dict:
    dates = [local(r, tz).date() for r in found]
    assert len(set(found)) == len(found)
    assert len(set(dates)) == len(dates), "a local date ran twice"
    assert all((b - a).days == 1 for a, b in zip(dates, dates[1:], strict=False))
    return {local(r, tz).date(): r for r in found}


def test_a_skipped_wall_time_runs_once_just_after_the_spring_change() -> None:
    found = runs("30 2 * * *", BERLIN, datetime(2027, 3, 25), datetime(2027, 3, 31))
    by_date = _one_run_per_local_date(found, BERLIN)
    assert len(found) == 6
    assert by_date[datetime(2027, 3, 27).date()] == datetime(2027, 3, 27, 1, 30)
    # 02:30 does not exist that day: it runs at 01:30 UTC, which the clocks show as 03:30.
    assert by_date[datetime(2027, 3, 28).date()] == datetime(2027, 3, 28, 1, 30)
    assert local(by_date[datetime(2027, 3, 28).date()], BERLIN).hour == 3
    assert by_date[datetime(2027, 3, 29).date()] == datetime(2027, 3, 29, 0, 30)


def test_a_repeated_wall_time_runs_once_at_its_first_occurrence_in_autumn() -> None:
    found = runs("30 2 * * *", BERLIN, datetime(2027, 10, 28), datetime(2027, 11, 3))
    by_date = _one_run_per_local_date(found, BERLIN)
    assert len(found) == 6
    assert by_date[datetime(2027, 10, 30).date()] == datetime(2027, 10, 30, 0, 30)
    assert by_date[datetime(2027, 10, 31).date()] == datetime(2027, 10, 31, 0, 30)
    assert by_date[datetime(2027, 11, 1).date()] == datetime(2027, 11, 1, 1, 30)


def test_the_next_run_is_found_from_instants_inside_the_changes() -> None:
    # 01:00 UTC is 03:00 CEST, after the skipped 02:30 on the wall clock but before its run.
    assert next_after("30 2 * * *", BERLIN, datetime(2027, 3, 28, 1)) == datetime(
        2027, 3, 28, 1, 30
    )
    assert next_after("30 2 * * *", BERLIN, datetime(2027, 3, 28, 1, 30)) == datetime(
        2027, 3, 29, 0, 30
    )
    # 01:00 and 01:30 UTC are the second 02:00 and 02:30 of the night: 02:30 ran already.
    for after in (datetime(2027, 10, 31, 0, 30), datetime(2027, 10, 31, 1, 0)):
        assert next_after("30 2 * * *", BERLIN, after) == datetime(2027, 11, 1, 1, 30)
    assert next_after("0 * * * *", BERLIN, datetime(2027, 10, 31, 1, 30)) == datetime(
        2027, 10, 31, 2
    )
    # An aware instant means the same as its naive UTC.
    aware = datetime(2027, 3, 28, 3, tzinfo=ZoneInfo(BERLIN))
    assert next_after("30 2 * * *", BERLIN, aware) == datetime(2027, 3, 28, 1, 30)


def test_a_half_hour_change_runs_the_wall_times_in_the_order_of_their_instants() -> None:
    # Lord Howe Island springs from +10:30 to +11:00 at 02:00 (to 02:30): the skipped 02:20
    # runs at 02:50, after 02:40, which comes first though it is later on the wall clock.
    found = runs(
        "20,40 2 * * *", "Australia/Lord_Howe", datetime(2027, 10, 2, 12), datetime(2027, 10, 3)
    )
    assert found == [datetime(2027, 10, 2, 15, 40), datetime(2027, 10, 2, 15, 50)]
    assert [local(r, "Australia/Lord_Howe").minute for r in found] == [40, 50]


@pytest.mark.parametrize(
    ("start", "two_hour_gaps", "count"),
    [(datetime(2027, 3, 27, 12), 0, 48), (datetime(2027, 10, 30, 12), 1, 47)],
)
def test_an_hourly_schedule_runs_each_instant_once_across_a_change(
    start: datetime, two_hour_gaps: int, count: int
) -> None:
    found = runs("0 * * * *", BERLIN, start, start + timedelta(hours=48))
    gaps = [b - a for a, b in zip(found, found[1:], strict=False)]
    assert all(HOUR <= gap <= 2 * HOUR for gap in gaps)
    assert sum(gap == 2 * HOUR for gap in gaps) == two_hour_gaps
    assert len(found) == count == len(set(found))


def test_new_york_moves_with_its_own_changes() -> None:
    found = runs("30 2 * * *", "America/New_York", datetime(2027, 3, 12), datetime(2027, 3, 16))
    assert found == [
        datetime(2027, 3, 12, 7, 30),
        datetime(2027, 3, 13, 7, 30),
        datetime(2027, 3, 14, 7, 30),  # 02:30 does not exist: 03:30 EDT
        datetime(2027, 3, 15, 6, 30),
    ]
    nine = runs("0 9 * * *", "America/New_York", datetime(2027, 11, 5), datetime(2027, 11, 9))
    assert [r.hour for r in nine] == [13, 13, 14, 14]


@pytest.mark.parametrize(("tz", "utc_hour"), [("Asia/Tokyo", 0), ("UTC", 9)])
def test_a_zone_without_changes_runs_at_the_same_utc_time_all_year(tz: str, utc_hour: int) -> None:
    for start in (datetime(2027, 3, 26), datetime(2027, 10, 29), datetime(2027, 12, 30)):
        found = runs("0 9 * * *", tz, start, start + timedelta(days=4))
        assert len(found) == 4
        assert all(r.hour == utc_hour and r.minute == 0 for r in found)
        hourly = runs("15 * * * *", tz, start, start + timedelta(days=2))
        assert all(b - a == HOUR for a, b in zip(hourly, hourly[1:], strict=False))


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("* * * * *", "at most every 5 minutes"),
        ("*/2 * * * *", "at most every 5 minutes"),
        ("0,58 0,23 * * *", "2 minutes apart"),
        ("0 0 30 2 *", "never runs"),
        ("bad", "has 1 field"),
        ("", "Enter a cron expression"),
        ("   ", "Enter a cron expression"),
        ("0 0 * * * *", "seconds"),
        ("@reboot", "@reboot"),
        ("@sometimes", "@daily"),
        ("61 * * * *", "minute field “61”"),
        ("0 24 * * *", "hour field “24”"),
        ("0 9 * * 8", "day of week field “8”"),
        ("0 " * 60, "at most 100 characters"),
    ],
)
def test_check_cron_refuses_with_a_sentence_naming_the_problem(expr: str, says: str) -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        check_cron(expr, BERLIN)
    assert refused.value.field == "cron"
    assert isinstance(refused.value, ValueError)
    assert says in str(refused.value) == refused.value.message
    assert refused.value.message.endswith(".")


@pytest.mark.parametrize(
    ("expr", "cron"),
    [
        ("*/5 * * * *", "*/5 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@HOURLY", "0 * * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("0  9 * *   1-5", "0 9 * * 1-5"),
        ("\t0 9 * * 1-5 ", "0 9 * * 1-5"),
        ("0 0 29 2 *", "0 0 29 2 *"),
    ],
)
def test_check_cron_accepts_and_normalises(expr: str, cron: str) -> None:
    assert check_cron(expr, BERLIN) == cron
    assert check_cron(expr, "UTC") == cron
    assert timedelta(minutes=5) == MIN_INTERVAL


def test_check_cron_refuses_an_unknown_zone_as_the_zone() -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        check_cron("0 9 * * *", "Mars/Olympus")
    assert refused.value.field == "timezone"


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "Europe", "localtime", "x" * 65, "../etc"])
def test_check_timezone_refuses_what_is_no_zone(name: str) -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        check_timezone(name)
    assert refused.value.field == "timezone"
    if name:
        assert name[:20] in refused.value.message


@pytest.mark.parametrize("name", ["Europe/Berlin", "UTC", "America/New_York", "Asia/Tokyo"])
def test_check_timezone_returns_a_zone_as_given(name: str) -> None:
    assert check_timezone(name) == name


@pytest.mark.parametrize(
    ("kind", "options", "cron", "words"),
    [
        ("hourly", {"minute": 15}, "15 * * * *", "Every hour at :15"),
        ("hourly", {}, "0 * * * *", "Every hour at :00"),
        ("daily", {"time": "09:00"}, "0 9 * * *", "Every day at 09:00"),
        ("daily", {"time": "7:05"}, "5 7 * * *", "Every day at 07:05"),
        ("weekdays", {"time": "09:00"}, "0 9 * * 1-5", "Weekdays at 09:00"),
        ("weekly", {"weekday": 0}, "0 9 * * 1", "Every Monday at 09:00"),
        ("weekly", {"weekday": 5, "time": "23:59"}, "59 23 * * 6", "Every Saturday at 23:59"),
        ("weekly", {"weekday": 6, "time": "00:00"}, "0 0 * * 0", "Every Sunday at 00:00"),
    ],
)
def test_presets_and_their_words(kind: str, options: dict, cron: str, words: str) -> None:
    assert preset_cron(kind, **options) == cron
    assert describe(cron) == words
    assert check_cron(cron, BERLIN) == cron


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("monthly", {}),
        ("", {}),
        ("daily", {"time": "25:00"}),
        ("daily", {"time": "9"}),
        ("daily", {"time": ""}),
        ("weekdays", {"time": "09:60"}),
        ("weekly", {"weekday": 7}),
        ("weekly", {"weekday": -1}),
        ("weekly", {"weekday": True}),
        ("hourly", {"minute": 60}),
        ("hourly", {"minute": "5"}),
    ],
)
def test_bad_presets_are_refused(kind: str, options: dict) -> None:
    with pytest.raises(ScheduleInvalid) as refused:
        preset_cron(kind, **options)
    assert refused.value.field == "preset"


@pytest.mark.parametrize(
    "cron",
    ["0 9 1 * *", "*/15 * * * *", "0 */2 * * *", "0 9 * * 1-3", "0 9 * 1 *", "0 9 * * MON"],
)
def test_other_crons_are_described_as_cron(cron: str) -> None:
    assert describe(cron) == f"Cron: {cron}"


def test_describe_speaks_of_sunday_as_seven_and_of_aliases() -> None:
    assert describe("0 9 * * 7") == "Every Sunday at 09:00"
    assert describe("@daily") == "Every day at 00:00"


def _first_run_by_minutes(minute: int, hour: int | None, after: datetime) -> datetime:
    """The rule read literally: the earliest UTC minute after `after` that a matching wall
    time maps to by fold=0 (Berlin's offsets are one or two hours)."""
    zone = ZoneInfo(BERLIN)
    instant = after.replace(second=0, microsecond=0, minute=minute)
    while True:
        if instant > after:
            for offset in (HOUR, 2 * HOUR):
                wall = instant + offset
                if (hour is None or wall.hour == hour) and wall.replace(tzinfo=zone).astimezone(
                    UTC
                ).replace(tzinfo=None) == instant:
                    return instant
        instant += HOUR


in_2027 = st.datetimes(min_value=datetime(2027, 1, 1), max_value=datetime(2027, 12, 31, 23, 59))
# The changes' own nights are where the rules differ, so they are drawn often.
near_changes = st.sampled_from([datetime(2027, 3, 28), datetime(2027, 10, 31)]).flatmap(
    lambda day: st.integers(-180, 360).map(lambda m: day + timedelta(minutes=m))
)
instants = st.one_of(in_2027, near_changes)


@settings(max_examples=150, deadline=None)
@given(
    minute=st.integers(0, 59),
    hour=st.one_of(st.none(), st.integers(0, 23)),
    a1=instants,
    a2=instants,
)
def test_the_next_run_is_later_monotone_and_the_earliest(
    minute: int, hour: int | None, a1: datetime, a2: datetime
) -> None:
    cron = f"{minute} {'*' if hour is None else hour} * * *"
    n1, n2 = next_after(cron, BERLIN, a1), next_after(cron, BERLIN, a2)
    assert n1 > a1
    assert n2 > a2
    if a1 < a2:
        assert n1 <= n2
    elif a2 < a1:
        assert n2 <= n1
    assert n1 == _first_run_by_minutes(minute, hour, a1)
