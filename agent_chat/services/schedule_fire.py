"""Firing schedules: every web worker looks every `FIRE_INTERVAL_S` for due schedules, claims
each due firing in the database (`db/schedules.py:claim_due`: one worker wins it) and starts
its run through the same use case as a send (`services/runs.py:start_run`), as the
schedule's owner: counted in their limit of working runs, followed, answered and stored like
any other. "Run now" is the same start, claimed by the person.

Where it lands: mode "new" makes a conversation titled with the schedule's title and the
local date; "append" adds to the chosen conversation. A firing that cannot start (the model
deleted, the person at their limit) records why in the schedule's history and, as a FAILED
answer saying why, in its conversation (`db/schedule_failures.py`); when the conversation it
adds to was deleted or is busy, only the history says it. One that runs after an occurrence the app was
down for says so in its message, so the agent and the person know it ran late.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from agent_chat.db import model_configs, schedule_failures, schedules
from agent_chat.db.errors import StoreError
from agent_chat.db.models import ChatSession, utcnow
from agent_chat.db.running import RUN_ACTIVE
from agent_chat.db.schedule_models import Schedule, ScheduleRun
from agent_chat.db.schedules import Claimed
from agent_chat.runs.bus import SessionChange
from agent_chat.runs.client import BridgeError
from agent_chat.runs.manager import RunRefused
from agent_chat.runs.periodic import Periodic
from agent_chat.services.backend import Backend
from agent_chat.services.conversations import create_conversation
from agent_chat.services.errors import ServiceError
from agent_chat.services.ids import row_id
from agent_chat.services.runs import start_run
from agent_chat.services.schedules import next_run

log = logging.getLogger(__name__)
FIRE_INTERVAL_S = 15.0


def _local(schedule: Schedule, moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC).astimezone(ZoneInfo(schedule.timezone))


def conversation_title(schedule: Schedule, due: datetime) -> str:
    """ "Morning digest · Mon 7 Dec 2026" in the schedule's zone."""
    local = _local(schedule, due)
    return f"{schedule.title} · {local:%a} {local.day} {local:%b %Y}"[:200]


def message_text(schedule: Schedule, run: ScheduleRun, now: datetime) -> str:
    """The prompt, with a last line when the firing is late (the app was down at its time)."""
    if not run.late:
        return schedule.prompt
    due, late = _local(schedule, run.due_at), _local(schedule, now)
    note = (
        f"(Scheduled for {due:%H:%M} on {due:%a} {due.day} {due:%b} ({schedule.timezone}); "
        f"run late, at {late:%H:%M}, because the app was not running then.)"
    )
    return f"{schedule.prompt}\n\n{note}"


async def _target(svc: Backend, schedule: Schedule, run: ScheduleRun) -> ChatSession:
    if schedule.mode == "append":
        chat = None  # SET NULL when it was deleted
        if schedule.session_id is not None:
            chat = await svc.storage.call(
                schedules.owned_chat, chat_id=schedule.session_id, user_id=schedule.owner_id
            )
        if chat is None:
            raise _Unstartable("The conversation this schedule adds to was deleted.")
        return chat
    return await create_conversation(
        svc,
        user_id=schedule.owner_id,
        title=conversation_title(schedule, run.due_at),
        model_id=schedule.model_id,
        skill_folder=schedule.skill_folder,
    )


class _Unstartable(Exception):
    """Why a firing cannot start, in words for the schedule's history."""


async def _check_model(svc: Backend, schedule: Schedule) -> None:
    if schedule.model_id is None:
        return
    if not await svc.storage.call(model_configs.get_model, model_id=schedule.model_id):
        raise _Unstartable("The model chosen for this schedule was deleted: choose another.")


async def start_firing(svc: Backend, claimed: Claimed, *, now: datetime) -> ScheduleRun:
    """Start the claimed firing's run; record where it went, or why it could not start."""
    schedule, run = claimed.schedule, claimed.run
    chat: ChatSession | None = None
    try:
        await _check_model(svc, schedule)
        chat = await _target(svc, schedule, run)
        started = await start_run(
            svc,
            user_id=schedule.owner_id,
            session_uuid=chat.session_uuid,
            text=message_text(schedule, run, now),
            model_id=schedule.model_id,
            skill_folder=schedule.skill_folder,
            tool_profile=schedule.tool_profile,
        )
    except (_Unstartable, RunRefused, ServiceError, StoreError, BridgeError) as exc:
        error = str(exc) or type(exc).__name__
        log.info("Schedule %s could not start: %s", schedule.id, error)
        run.error = error
        busy = isinstance(exc, RunRefused) and exc.code == RUN_ACTIVE
        await _unstarted(svc, claimed, chat, error, busy=busy, now=now)
        return run
    await svc.storage.call(
        schedules.record_outcome,
        run_id=run.id or 0,
        session_id=chat.id,
        message_id=started.assistant_message_id,
    )
    await svc.storage.call(
        schedules.mark_conversation, chat_id=chat.id or 0, schedule_id=schedule.id or 0
    )
    run.session_id, run.message_id = chat.id, started.assistant_message_id
    return run


async def _unstarted(
    svc: Backend,
    claimed: Claimed,
    chat: ChatSession | None,
    error: str,
    *,
    busy: bool,
    now: datetime,
) -> None:
    """Where the person looks: the prompt and a FAILED answer saying why, in the firing's
    conversation (a new one made for it when none was yet). Only the history says it when
    there is no conversation to say it in (the one it adds to was deleted), or when that one
    is busy (a turn cannot be added under a working answer)."""
    schedule, run = claimed.schedule, claimed.run
    if chat is None and schedule.mode == "new":
        try:
            chat = await create_conversation(
                svc,
                user_id=schedule.owner_id,
                title=conversation_title(schedule, run.due_at),
            )
        except (ServiceError, StoreError):
            chat = None
    if chat is None or busy:
        await svc.storage.call(schedules.record_outcome, run_id=run.id or 0, error=error)
        return
    run.session_id = chat.id
    run.message_id = await svc.storage.call(
        schedule_failures.record_unstarted,
        chat_id=chat.id or 0,
        run_id=run.id or 0,
        schedule_id=schedule.id or 0,
        text=message_text(schedule, run, now),
        error=error,
    )
    svc.runs.bus.publish_session(SessionChange(chat.session_uuid, "", schedule.owner_id))


async def fire_due(svc: Backend, *, now: datetime | None = None) -> list[ScheduleRun]:
    """Claim and start every firing due at `now` this worker wins."""
    now = now or utcnow()
    claimed = await svc.storage.call(schedules.claim_due, now=now, next_after=next_run)
    return [await start_firing(svc, one, now=now) for one in claimed]


async def run_now(
    svc: Backend, *, user_id: int, schedule_id: int, now: datetime | None = None
) -> ScheduleRun:
    """Fire the person's schedule now (paused or not); its next time stays."""
    now = now or utcnow()
    schedule_id = row_id(schedule_id, "Schedule")
    claimed = await svc.storage.call(
        schedules.claim_now, user_id=user_id, schedule_id=schedule_id, now=now
    )
    return await start_firing(svc, claimed, now=now)


class ScheduleFiring(Periodic):
    """The firing loop of one web worker (several workers: the claim picks one per firing)."""

    task_name = "schedule-firing"

    def __init__(self, svc: Backend, interval_s: float = FIRE_INTERVAL_S) -> None:
        super().__init__(interval_s)
        self.svc = svc

    async def check(self) -> int:
        return len(await fire_due(self.svc))
