"""Store functions of scheduled runs (`db/schedule_models.py`): a person's schedules, and the
claim of a due firing that makes each occurrence run once however many workers look.

Times are naive UTC. What a time means (cron, time zone, daylight saving) is decided above,
in `services/schedule_times.py`: these functions take its answers (`next_run_at`, or a
`next_after` callable for the claim) and store them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ChatMessage, ChatSession, utcnow
from agent_chat.db.schedule_models import MODES, Schedule, ScheduleRun
from agent_chat.db.sessions import get_session

TITLE_MAX_CHARS = 120
MAX_SCHEDULES = 100  # per person
HISTORY_LIMIT = 50
# An occurrence claimed this long after it was due ran late (the app was not running then):
# the conversation says so. Below it, an ordinary delay of the firing loop.
LATE_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class Claimed:
    """A firing this worker won: the schedule as it was, and its history row."""

    schedule: Schedule
    run: ScheduleRun


@dataclass(frozen=True)
class RunInfo:
    """A firing as the schedule's history lists it: where it went and how its answer ended."""

    run: ScheduleRun
    session_uuid: str | None  # None: no conversation (it could not start, or was deleted)
    status: str | None  # the answer's status now (RUNNING, SUCCESS, FAILED …), None without


def _missing(schedule_id: int) -> NotFound:
    return NotFound(f"Schedule {schedule_id} does not exist")


def _title(title: str, prompt: str) -> str:
    """The title as given (one line, trimmed), else the prompt's first line."""
    chosen = " ".join((title or "").split()) or " ".join(prompt.split())[:60]
    if len(chosen) > TITLE_MAX_CHARS:
        raise ValidationFailed({"title": f"At most {TITLE_MAX_CHARS} characters."})
    return chosen


def _target(session: Session, *, user_id: int, mode: str, session_uuid: str | None) -> int | None:
    if mode not in MODES:
        raise ValidationFailed({"mode": f"One of {', '.join(MODES)}."})
    if mode == "new":
        return None
    chat = get_session(session=session, session_uuid=session_uuid or "", user_id=user_id)
    if chat is None or chat.id is None:
        raise ValidationFailed({"sessionId": "Choose one of your conversations to add to."})
    return chat.id


def create_schedule(
    *,
    session: Session,
    user_id: int,
    title: str,
    prompt: str,
    cron: str,
    timezone: str,
    next_run_at: datetime,
    model_id: int | None = None,
    skill_folder: str | None = None,
    tool_profile: str | None = None,
    mode: str = "new",
    session_uuid: str | None = None,
) -> Schedule:
    """A new schedule of the person's (checked values: the service checked cron, zone,
    model, skill and profile). ValidationFailed for a bad title, mode or conversation, or
    past `MAX_SCHEDULES`."""
    count = session.exec(
        select(func.count()).select_from(Schedule).where(Schedule.owner_id == user_id)
    ).one()
    if count >= MAX_SCHEDULES:
        raise ValidationFailed({"schedule": f"At most {MAX_SCHEDULES} schedules each."})
    row = Schedule(
        owner_id=user_id,
        title=_title(title, prompt),
        prompt=prompt,
        cron=cron,
        timezone=timezone,
        next_run_at=next_run_at,
        model_id=model_id,
        skill_folder=skill_folder,
        tool_profile=tool_profile,
        mode=mode,
        session_id=_target(session, user_id=user_id, mode=mode, session_uuid=session_uuid),
    )
    session.add(row)
    session.flush()
    return row


def get_schedule(*, session: Session, user_id: int, schedule_id: int) -> Schedule:
    """The person's schedule; another's is NotFound like a missing one."""
    row = session.get(Schedule, schedule_id)
    if row is None or row.owner_id != user_id:
        raise _missing(schedule_id)
    return row


def list_schedules(*, session: Session, user_id: int) -> list[Schedule]:
    """The person's schedules, the next to fire first (paused ones last)."""
    query = (
        select(Schedule)
        .where(Schedule.owner_id == user_id)
        .order_by(col(Schedule.paused), col(Schedule.next_run_at), col(Schedule.id))
    )
    return list(session.exec(query).all())


def update_schedule(
    *,
    session: Session,
    user_id: int,
    schedule_id: int,
    changes: dict[str, object],
    session_uuid: str | None = None,
) -> Schedule:
    """Change the fields in `changes` (checked by the service: title, prompt, cron, timezone,
    model_id, skill_folder, tool_profile, mode, next_run_at); a mode "append" needs
    `session_uuid`, the person's conversation. All or nothing."""
    row = get_schedule(session=session, user_id=user_id, schedule_id=schedule_id)
    allowed = {"title", "prompt", "cron", "timezone", "model_id", "skill_folder",
               "tool_profile", "mode", "next_run_at"}  # fmt: skip
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"not schedule fields: {sorted(unknown)}")
    if "mode" in changes or session_uuid is not None:
        mode = str(changes.get("mode", row.mode))
        row.session_id = _target(session, user_id=user_id, mode=mode, session_uuid=session_uuid)
    for name, value in changes.items():
        setattr(row, name, value)
    if "title" in changes or "prompt" in changes:
        row.title = _title(str(changes.get("title", row.title)), row.prompt)
    if row.paused:
        row.next_run_at = None  # a paused schedule has no next run; resuming computes it
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    return row


def set_paused(
    *, session: Session, user_id: int, schedule_id: int, next_run_at: datetime | None
) -> Schedule:
    """Pause (`next_run_at` None) or resume from `next_run_at` (what was due while paused
    does not run)."""
    row = get_schedule(session=session, user_id=user_id, schedule_id=schedule_id)
    row.paused = next_run_at is None
    row.next_run_at = next_run_at
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    return row


def delete_schedule(*, session: Session, user_id: int, schedule_id: int) -> None:
    """Delete it and its history (the conversations it made stay)."""
    row = get_schedule(session=session, user_id=user_id, schedule_id=schedule_id)
    session.delete(row)
    session.flush()


def owned_chat(*, session: Session, chat_id: int, user_id: int) -> ChatSession | None:
    """The conversation an "append" schedule adds to, if it is still the person's."""
    chat = session.get(ChatSession, chat_id)
    return chat if chat is not None and chat.owner_id == user_id else None


def claim_due(
    *,
    session: Session,
    now: datetime,
    next_after: Callable[[Schedule, datetime], datetime],
    limit: int = 20,
) -> list[Claimed]:
    """The due firings this caller wins: for each schedule whose `next_run_at` has come, move
    it on to `next_after(schedule, now)` by an UPDATE that holds only while it still has the
    value read, and record the firing. Two workers claiming at once: one UPDATE changes the
    row, the other's matches nothing (PostgreSQL re-reads the row after the first commits;
    SQLite has one writer), so each occurrence fires once. Occurrences missed while the app
    was down are one firing (`late`), as the next is computed after `now`."""
    query = (
        select(Schedule)
        .where(col(Schedule.paused).is_(False))
        .where(col(Schedule.next_run_at).is_not(None))
        .where(col(Schedule.next_run_at) <= now)
        .order_by(col(Schedule.next_run_at))
        .limit(limit)
    )
    claimed: list[Claimed] = []
    for row in session.exec(query).all():
        due = row.next_run_at
        assert due is not None
        moved = session.execute(
            update(Schedule)
            .where(col(Schedule.id) == row.id)
            .where(col(Schedule.next_run_at) == due)
            .where(col(Schedule.paused).is_(False))
            .values(next_run_at=next_after(row, now))
            .execution_options(synchronize_session=False)
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            continue  # another worker fired it
        run = ScheduleRun(schedule_id=row.id or 0, due_at=due, late=now - due > LATE_AFTER)
        session.add(run)
        session.flush()
        claimed.append(Claimed(row, run))
    return claimed


def claim_now(*, session: Session, user_id: int, schedule_id: int, now: datetime) -> Claimed:
    """A firing of the person's schedule now ("Run now"), whatever its times: its next
    occurrence stays as it was."""
    row = get_schedule(session=session, user_id=user_id, schedule_id=schedule_id)
    run = ScheduleRun(schedule_id=row.id or 0, due_at=now, manual=True)
    session.add(run)
    session.flush()
    return Claimed(row, run)


def record_outcome(
    *,
    session: Session,
    run_id: int,
    session_id: int | None = None,
    message_id: int | None = None,
    error: str | None = None,
) -> None:
    """Where a firing went (its conversation and answer), or why it could not start."""
    run = session.get(ScheduleRun, run_id)
    if run is None:
        return  # its schedule was deleted meanwhile
    run.session_id = session_id
    run.message_id = message_id
    run.error = None if error is None else error[:500]
    session.add(run)


def history(
    *, session: Session, user_id: int, schedule_id: int, limit: int = HISTORY_LIMIT
) -> list[RunInfo]:
    """The person's schedule's firings, newest first, each with its conversation's uuid and
    its answer's status now."""
    get_schedule(session=session, user_id=user_id, schedule_id=schedule_id)
    query = (
        select(ScheduleRun, ChatSession.session_uuid, ChatMessage.status)
        .join(ChatSession, col(ChatSession.id) == ScheduleRun.session_id, isouter=True)
        .join(ChatMessage, col(ChatMessage.id) == ScheduleRun.message_id, isouter=True)
        .where(ScheduleRun.schedule_id == schedule_id)
        .order_by(col(ScheduleRun.started_at).desc(), col(ScheduleRun.id).desc())
        .limit(limit)
    )
    return [
        RunInfo(run, uuid, None if status is None else str(status))
        for run, uuid, status in session.exec(query).all()
    ]


def mark_conversation(*, session: Session, chat_id: int, schedule_id: int) -> None:
    """The conversation a firing landed in is the schedule's (the sidebar's clock)."""
    session.execute(
        update(ChatSession)
        .where(col(ChatSession.id) == chat_id)
        .values(schedule_id=schedule_id)
        .execution_options(synchronize_session=False)
    )


@dataclass(frozen=True)
class Listed:
    """A schedule as the schedules page lists it."""

    schedule: Schedule
    last: RunInfo | None  # its newest firing; None before the first
    target_uuid: str | None  # the conversation an "append" schedule adds to (None: none, gone)
    target_title: str


def overview(*, session: Session, user_id: int) -> list[Listed]:
    """The person's schedules (`list_schedules`' order), each with its newest firing and
    the conversation it adds to: three statements however many there are."""
    rows = list_schedules(session=session, user_id=user_id)
    ids = [r.id for r in rows]
    newest = (
        select(func.max(ScheduleRun.id))
        .where(col(ScheduleRun.schedule_id).in_(ids))
        .group_by(col(ScheduleRun.schedule_id))
    )
    query = (
        select(ScheduleRun, ChatSession.session_uuid, ChatMessage.status)
        .join(ChatSession, col(ChatSession.id) == ScheduleRun.session_id, isouter=True)
        .join(ChatMessage, col(ChatMessage.id) == ScheduleRun.message_id, isouter=True)
        .where(col(ScheduleRun.id).in_(newest))
    )
    last = {
        run.schedule_id: RunInfo(run, uuid, None if status is None else str(status))
        for run, uuid, status in (session.exec(query).all() if ids else [])
    }
    target_ids = [r.session_id for r in rows if r.session_id is not None]
    chats = (
        session.exec(
            select(ChatSession).where(
                col(ChatSession.id).in_(target_ids), ChatSession.owner_id == user_id
            )
        ).all()
        if target_ids
        else []
    )
    targets = {c.id: c for c in chats}
    listed = []
    for row in rows:
        chat = targets.get(row.session_id)
        uuid, title = (chat.session_uuid, chat.title) if chat is not None else (None, "")
        listed.append(Listed(row, last.get(row.id or 0), uuid, title))
    return listed
