"""Scheduled runs (services/schedules.py, services/schedule_fire.py) with a clock the tests
move, a real RunManager over the real bridge and the scripted model: a weekday schedule fires
on Monday and not on Saturday, into a new conversation titled with the date; two workers
claiming at once fire it once; occurrences missed while the app was down run once, late, and
the message says so; a deleted model or conversation makes a failed firing that says why and
no conversation; bad input is refused field by field with nothing saved; another person's
schedule is NotFound; pause, resume and "Run now"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from agent_chat.db import model_configs, schedules, sessions
from agent_chat.db.engine import make_engine
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from agent_chat.services import conversations
from agent_chat.services import schedule_fire as fire
from agent_chat.services import schedules as use
from agent_chat.services.schedules import When
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import chat_messages, fake_model_row, finished, managers, new_chat

WEEKDAYS_9 = When("0 9 * * 1-5", "Europe/Berlin")
FRIDAY_NOON = datetime(2027, 1, 8, 12, 0)  # UTC; Berlin is UTC+1 in January
SATURDAY_9 = datetime(2027, 1, 9, 8, 0)
MONDAY_9 = datetime(2027, 1, 11, 8, 0)


@pytest.fixture
async def svc(
    db_url: str, storage: Storage, bridge: RunningBridge, fake_model: RunningFakeModel
) -> AsyncIterator[SimpleNamespace]:
    fake_model_row(storage, fake_model)
    async with managers(db_url, storage) as make:
        runs: RunManager = await make(bridge.base_url, max_active_runs=2)
        yield SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)


async def _digest(svc, user: int, **kw) -> int:  # noqa: ANN001
    row = await use.create_schedule(
        svc, user_id=user, prompt="Summarise the news", title="Digest", when=WEEKDAYS_9,
        now=FRIDAY_NOON, **kw,
    )  # fmt: skip
    return row.id or 0


async def test_a_weekday_schedule_fires_on_monday_not_on_saturday(svc, user) -> None:
    schedule_id = await _digest(svc, user)
    row = await use.get_schedule(svc, user_id=user, schedule_id=schedule_id)
    assert row.next_run_at == MONDAY_9 and row.cron == "0 9 * * 1-5"

    assert await fire.fire_due(svc, now=SATURDAY_9) == []
    assert await fire.fire_due(svc, now=MONDAY_9 - timedelta(seconds=1)) == []
    [run] = await fire.fire_due(svc, now=MONDAY_9 + timedelta(seconds=5))
    assert run.error is None and not run.late and run.message_id is not None
    answer = await finished(svc.storage, run.message_id)
    assert answer.status == "SUCCESS"
    [info] = await use.schedule_history(svc, user_id=user, schedule_id=schedule_id)
    assert info.session_uuid is not None and info.status == "SUCCESS"
    chat = await conversations.conversation_for(svc, user_id=user, session_uuid=info.session_uuid)
    assert chat.title == "Digest · Mon 11 Jan 2027"
    assert chat_messages(svc.storage, info.session_uuid)[0].content == "Summarise the news"
    row = await use.get_schedule(svc, user_id=user, schedule_id=schedule_id)
    assert row.next_run_at == MONDAY_9 + timedelta(days=1)  # Tuesday
    assert await fire.fire_due(svc, now=MONDAY_9 + timedelta(minutes=1)) == []  # fired once


async def test_two_workers_claiming_at_once_fire_it_once(svc, user) -> None:
    await _digest(svc, user)
    now = MONDAY_9 + timedelta(seconds=1)
    claims = await asyncio.gather(
        *(svc.storage.call(schedules.claim_due, now=now, next_after=use.next_run) for _ in range(6))
    )
    assert sum(len(c) for c in claims) == 1


async def test_two_workers_firing_at_once_start_one_run_each_time(
    svc, user, db_url: str, bridge: RunningBridge
) -> None:
    """Two workers (each its own engine and RunManager, as two app processes have) fire at
    the same moments: each occurrence makes one conversation with one answer."""
    schedule_id = await _digest(svc, user)
    engine = make_engine(db_url)
    try:
        other_storage = Storage(engine)
        async with managers(db_url, other_storage) as make:
            runs = await make(bridge.base_url, max_active_runs=2)
            other = SimpleNamespace(storage=other_storage, runs=runs, settings=runs.settings)
            for day in range(2):  # Monday and Tuesday at 9
                now = MONDAY_9 + timedelta(days=day, seconds=1)
                fired = await asyncio.gather(
                    fire.fire_due(svc, now=now), fire.fire_due(other, now=now)
                )
                [run] = [one for worker in fired for one in worker]
                assert run.error is None
                assert (await finished(svc.storage, run.message_id)).status == "SUCCESS"
    finally:
        engine.dispose()
    history = await use.schedule_history(svc, user_id=user, schedule_id=schedule_id)
    assert len(history) == 2 and len({h.session_uuid for h in history}) == 2
    for info in history:
        assert [m.role for m in chat_messages(svc.storage, info.session_uuid)] == [
            "USER",
            "ASSISTANT",
        ]


async def test_missed_occurrences_run_once_late_and_say_so(svc, user) -> None:
    schedule_id = await _digest(svc, user)
    back = MONDAY_9 + timedelta(days=3, hours=2, minutes=7)  # Thursday 11:07 local
    [run] = await fire.fire_due(svc, now=back)
    assert run.late and run.due_at == MONDAY_9
    await finished(svc.storage, run.message_id)
    [info] = await use.schedule_history(svc, user_id=user, schedule_id=schedule_id)
    text = chat_messages(svc.storage, info.session_uuid)[0].content
    assert text.startswith("Summarise the news\n\n(Scheduled for 09:00 on Mon 11 Jan")
    assert "run late, at 11:07, because the app was not running then." in text
    row = await use.get_schedule(svc, user_id=user, schedule_id=schedule_id)
    assert row.next_run_at == MONDAY_9 + timedelta(days=4)  # Friday: no second catch-up


async def test_a_deleted_model_or_conversation_fails_the_firing_with_why(
    svc, user, storage: Storage
) -> None:
    extra = storage.call_sync(
        model_configs.create_model, name="Spare", base_url="http://127.0.0.1:9/v1",
        model_name="spare", api_key="", is_default=False,
    )  # fmt: skip
    schedule_id = await _digest(svc, user, model_id=extra.id)
    storage.call_sync(model_configs.delete_model, model_id=extra.id)
    [run] = await fire.fire_due(svc, now=MONDAY_9)
    assert run.error == "The model chosen for this schedule was deleted: choose another."
    # The person sees it where the answer would be: a conversation, unread, with the
    # prompt and a FAILED answer that says why.
    [info] = await use.schedule_history(svc, user_id=user, schedule_id=schedule_id)
    assert info.session_uuid is not None and info.run.error == run.error
    assert info.status == "FAILED" and info.run.message_id == run.message_id
    question, answer = chat_messages(svc.storage, info.session_uuid)
    assert question.content == "Summarise the news" and question.role == "USER"
    assert (answer.status, answer.error) == (
        "FAILED",
        "This scheduled run could not start: " + run.error,
    )
    chat = storage.call_sync(sessions.get_session, session_uuid=info.session_uuid, user_id=user)
    assert chat.unread and chat.schedule_id == schedule_id
    assert chat.title == "Digest · Mon 11 Jan 2027"
    assert not await svc.storage.call(schedules.list_schedules, user_id=user + 999)

    chat = new_chat(storage, user)
    appended = await use.create_schedule(
        svc, user_id=user, prompt="Again", when=WEEKDAYS_9, mode="append",
        session_uuid=chat, now=FRIDAY_NOON,
    )  # fmt: skip
    await conversations.delete_conversation(svc, user_id=user, session_uuid=chat)
    run = await fire.run_now(svc, user_id=user, schedule_id=appended.id or 0)
    assert run.error == "The conversation this schedule adds to was deleted."


async def test_bad_input_is_refused_by_field_and_nothing_is_saved(
    svc, user, other_user, storage
) -> None:
    other = other_user
    theirs = new_chat(storage, other)
    cases = [
        (dict(when=When("* * * * *", "Europe/Berlin")), "cron"),
        (dict(when=When("0 9 * * 1-5", "Mars/Olympus")), "timezone"),
        (dict(when=When("not cron", "UTC")), "cron"),
        (dict(prompt="   "), "prompt"),
        (dict(model_id=424242), "modelId"),
        (dict(mode="append"), "sessionId"),
        (dict(mode="append", session_uuid=theirs), "sessionId"),
        (dict(mode="sometimes"), "mode"),
        (dict(title="x" * 121), "title"),
    ]
    for override, field in cases:
        kw = dict(prompt="Hello", when=WEEKDAYS_9) | override
        with pytest.raises(ValidationFailed) as refused:
            await use.create_schedule(svc, user_id=user, now=FRIDAY_NOON, **kw)
        assert field in refused.value.field_errors, (override, refused.value.field_errors)
    assert await use.list_schedules(svc, user_id=user) == []


async def test_pause_resume_run_now_and_another_persons_schedule(svc, user, other_user) -> None:
    schedule_id = await _digest(svc, user)
    paused = await use.pause_schedule(svc, user_id=user, schedule_id=schedule_id)
    assert paused.paused and paused.next_run_at is None
    assert await fire.fire_due(svc, now=MONDAY_9 + timedelta(days=30)) == []
    run = await fire.run_now(svc, user_id=user, schedule_id=schedule_id, now=MONDAY_9)
    assert run.manual and run.error is None
    await finished(svc.storage, run.message_id)
    resumed = await use.resume_schedule(
        svc, user_id=user, schedule_id=schedule_id, now=MONDAY_9 + timedelta(days=4, hours=2)
    )
    assert resumed.next_run_at == MONDAY_9 + timedelta(days=7)  # next Monday, Friday's skipped
    changed = await use.update_schedule(
        svc, user_id=user, schedule_id=schedule_id,
        changes={"cron": "30 7 * * *", "timezone": "UTC"}, now=MONDAY_9,
    )  # fmt: skip
    assert changed.next_run_at == MONDAY_9 - timedelta(minutes=30) + timedelta(days=1)

    other = other_user
    for call in (
        use.get_schedule(svc, user_id=other, schedule_id=schedule_id),
        use.pause_schedule(svc, user_id=other, schedule_id=schedule_id),
        use.delete_schedule(svc, user_id=other, schedule_id=schedule_id),
        use.schedule_history(svc, user_id=other, schedule_id=schedule_id),
        fire.run_now(svc, user_id=other, schedule_id=schedule_id),
        use.update_schedule(svc, user_id=other, schedule_id=schedule_id, changes={"title": "x"}),
    ):
        with pytest.raises(NotFound):
            await call
    await use.delete_schedule(svc, user_id=user, schedule_id=schedule_id)
    assert await use.list_schedules(svc, user_id=user) == []
