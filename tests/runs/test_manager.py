"""RunManager over a migrated SQLite database, a real bridge and the scripted fake model."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from agent_chat.db import messages, model_configs, pauses, sessions
from agent_chat.db.models import MessageRole, MessageStatus, PauseStatus
from agent_chat.runs.client import BridgeClient
from agent_chat.runs.manager import BRIDGE_RESTARTED, RunRefused
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import free_port
from tests.support.bridge import RunningBridge
from tests.support.runs import (
    MakeManager,
    assert_every_seq_once,
    chat_messages,
    finished,
    message,
    new_chat,
    run_to_end,
    stored_seqs,
    stored_view,
    wait_for,
)

SUCCESS = MessageStatus.SUCCESS.value
FAILED = MessageStatus.FAILED.value
STOPPED = MessageStatus.STOPPED.value


# ---- a turn ----------------------------------------------------------------------------------


async def test_send_completes_with_the_answer_usage_title_and_every_event_logged(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    text = "Hello\nthere, this is the first message of the chat"
    started = await manager.send(session_uuid=chat, text=text, user_id=user)
    live = await run_to_end(manager, started.run_id)

    answer = message(storage, started.assistant_message_id)
    assert answer.status == SUCCESS
    assert answer.content == f"Echo: {text}"
    assert answer.error is None
    assert answer.input_tokens and answer.output_tokens and answer.total_tokens
    assert answer.context_tokens == answer.input_tokens  # one model call: its prompt
    assert answer.run_id == started.run_id
    assert answer.completed_at is not None
    question = message(storage, started.user_message_id)
    assert (question.role, question.content, question.status) == ("USER", text, "SENT")
    assert answer.parent_id == question.id

    title = storage.call_sync(sessions.get_session, user_id=user, session_uuid=chat).title
    assert title == "Hello there, this is the first"[:30] and "\n" not in title

    assert live.view.state == "succeeded"
    assert_every_seq_once(storage, answer.id, live.view.last_seq)
    assert stored_view(storage, answer.id) == live.view
    assert manager.consumed.get(started.run_id) is None  # no longer followed
    assert manager.consumed.for_session(chat) is None


async def test_second_turn_sends_the_first_as_history(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    first = await manager.send(session_uuid=chat, text="My name is Ada", user_id=user)
    await run_to_end(manager, first.run_id)
    second = await manager.send(session_uuid=chat, text="Do you recall?", user_id=user)
    await run_to_end(manager, second.run_id)

    assert message(storage, second.assistant_message_id).content == (
        "Earlier you said: My name is Ada"
    )
    branch = chat_messages(storage, chat)
    assert [m.role for m in branch] == ["USER", "ASSISTANT", "USER", "ASSISTANT"]
    assert (
        storage.call_sync(sessions.get_session, user_id=user, session_uuid=chat).title
        == "My name is Ada"
    )


# ---- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\t "])
async def test_an_empty_message_is_refused_and_nothing_is_stored(
    text: str,
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    with pytest.raises(RunRefused, match="empty"):
        await manager.send(session_uuid=chat, text=text, user_id=user)
    assert chat_messages(storage, chat) == []


async def test_an_oversized_message_is_refused_naming_the_limit(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url, max_message_chars=1000)
    chat = new_chat(storage)
    with pytest.raises(RunRefused) as excinfo:
        await manager.send(session_uuid=chat, text="x" * 1001, user_id=user)
    assert "1,000" in str(excinfo.value) and "1,001" in str(excinfo.value)
    assert chat_messages(storage, chat) == []
    started = await manager.send(
        session_uuid=chat, text="y" * 1000, user_id=user
    )  # at the limit is fine
    await run_to_end(manager, started.run_id)


async def test_a_second_send_while_the_session_runs_is_refused(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="ask me something", user_id=user)
    with pytest.raises(RunRefused, match="still running"):
        await manager.send(session_uuid=chat, text="and another thing", user_id=user)
    assert len(chat_messages(storage, chat)) == 2
    await manager.stop(started.run_id, user_id=user)
    await run_to_end(manager, started.run_id)
    assert message(storage, started.assistant_message_id).status == STOPPED


async def test_the_global_cap_refuses_a_run_in_another_session(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url, max_active_runs=1)
    busy, other = new_chat(storage), new_chat(storage)
    started = await manager.send(session_uuid=busy, text="slow please", user_id=user)
    with pytest.raises(RunRefused, match="limit is 1"):
        await manager.send(session_uuid=other, text="hello", user_id=user)
    assert chat_messages(storage, other) == []
    await manager.stop(started.run_id, user_id=user)
    await run_to_end(manager, started.run_id)
    again = await manager.send(
        session_uuid=other, text="hello", user_id=user
    )  # the slot is free again
    await run_to_end(manager, again.run_id)
    assert message(storage, again.assistant_message_id).status == SUCCESS


async def test_a_run_waiting_for_an_answer_does_not_count_toward_the_cap(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url, max_active_runs=1)
    waiting, other = new_chat(storage), new_chat(storage)
    asked = await manager.send(session_uuid=waiting, text="ask me", user_id=user)
    await wait_for(lambda: manager.consumed.get(asked.run_id).view.state == "waiting_input")
    started = await manager.send(session_uuid=other, text="hello", user_id=user)
    await run_to_end(manager, started.run_id)
    await manager.stop(asked.run_id, user_id=user)
    await run_to_end(manager, asked.run_id)


async def test_an_unknown_session_is_refused(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    for session_uuid in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        with pytest.raises(RunRefused, match="does not exist"):
            await manager.send(session_uuid=session_uuid, text="hello", user_id=user)
    assert await manager.session_states(user_id=user) == {}


async def test_no_model_configured_is_refused(
    bridge: RunningBridge, storage: Storage, make_manager: MakeManager, user: int
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    with pytest.raises(RunRefused, match="No model"):
        await manager.send(session_uuid=chat, text="hello", user_id=user)
    assert chat_messages(storage, chat) == []
    assert storage.call_sync(model_configs.list_models) == []


async def test_bridge_down_at_send_fails_the_answer_and_keeps_the_question(
    storage: Storage, fake_model_row: int, make_manager: MakeManager, user: int
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    manager = await make_manager(url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="hello", user_id=user)
    answer = message(storage, started.assistant_message_id)
    assert answer.status == FAILED
    assert "not reachable" in answer.error and url in answer.error
    question = message(storage, started.user_message_id)
    assert (question.content, question.status) == ("hello", "SENT")
    assert manager.consumed.for_session(chat) is None  # the session can send again


# ---- questions, stop -------------------------------------------------------------------------


async def test_a_question_is_recorded_answered_and_the_run_completes(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
    answer_id = started.assistant_message_id

    def open_pause() -> Any:
        return storage.call_sync(pauses.open_pause, message_id=answer_id)

    await wait_for(lambda: open_pause() is not None)
    pause = open_pause()
    assert pause.status == PauseStatus.UNANSWERED.value
    assert pause.question == "Which color do you prefer?"
    live = manager.consumed.get(started.run_id)
    assert live.view.state == "waiting_input" and live.view.clarify is not None
    assert await manager.session_states(user_id=user) == {chat: "waiting"}
    # The question's log rows are flushed at once, not after 200 ms or 50 rows: a reload
    # while the agent waits brings the question back.
    await wait_for(lambda: stored_view(storage, answer_id).clarify is not None, timeout=1)
    assert stored_view(storage, answer_id).clarify == live.view.clarify

    await manager.answer(started.run_id, pause.clarify_id, "blue", user_id=user)
    live = await run_to_end(manager, started.run_id)

    done = message(storage, answer_id)
    assert done.status == SUCCESS and done.content == "You chose blue."
    answered = storage.call_sync(pauses.open_pause, message_id=answer_id)
    assert answered is None
    rows = storage.call_sync(_pauses_of, message_id=answer_id)
    assert [(p.status, p.answer) for p in rows] == [(PauseStatus.ANSWERED.value, "blue")]
    assert_every_seq_once(storage, answer_id, live.view.last_seq)
    assert stored_view(storage, answer_id) == live.view


def _pauses_of(*, session: Any, message_id: int) -> list[Any]:
    from sqlmodel import select

    from agent_chat.db.models import RunPause

    return list(session.exec(select(RunPause).where(RunPause.message_id == message_id)).all())


async def test_stop_during_a_slow_run_keeps_the_partial_answer(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="slow please", user_id=user)
    live = manager.consumed.get(started.run_id)
    await wait_for(lambda: "word3 " in live.view.answer)
    await manager.stop(started.run_id, user_id=user)
    live = await run_to_end(manager, started.run_id)

    stopped = message(storage, started.assistant_message_id)
    assert stopped.status == STOPPED
    assert stopped.content.startswith("word1 word2 word3")
    assert "word200" not in stopped.content
    assert_every_seq_once(storage, stopped.id, live.view.last_seq)
    assert stored_view(storage, stopped.id) == live.view


async def test_stop_during_a_question_abandons_it(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
    answer_id = started.assistant_message_id
    await wait_for(lambda: storage.call_sync(pauses.open_pause, message_id=answer_id))
    await manager.stop(started.run_id, user_id=user)
    await run_to_end(manager, started.run_id)
    assert message(storage, answer_id).status == STOPPED
    assert storage.call_sync(pauses.open_pause, message_id=answer_id) is None


# ---- app restart -----------------------------------------------------------------------------


async def test_a_restarted_app_reattaches_and_loses_no_event(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    first = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await first.send(session_uuid=chat, text="long 60 delay=0.05", user_id=user)
    live = first.consumed.get(started.run_id)
    await wait_for(lambda: "word5 " in live.view.answer)
    await first.close()  # the app stops; the run goes on in the bridge
    before = stored_seqs(storage, started.assistant_message_id)
    assert before == list(range(1, len(before) + 1))
    assert message(storage, started.assistant_message_id).status == "RUNNING"

    second = await make_manager(bridge.base_url)  # start() re-attaches
    assert second.consumed.for_session(chat) is not None
    live = await run_to_end(second, started.run_id)

    done = message(storage, started.assistant_message_id)
    assert done.status == SUCCESS
    assert done.content == " ".join(f"word{i}" for i in range(1, 61))
    assert_every_seq_once(storage, done.id, live.view.last_seq)
    assert stored_view(storage, done.id) == live.view


async def test_close_is_bounded_when_a_task_ignores_its_cancel(
    bridge: RunningBridge,
    make_manager: MakeManager,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The app's shutdown (Ctrl-C, a redeploy) ends even when one task swallows its cancel."""
    monkeypatch.setattr("agent_chat.runs.manager.CLOSE_WAIT_S", 0.2)
    manager = await make_manager(bridge.base_url)
    stop = asyncio.Event()

    async def stubborn() -> None:
        while not stop.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await stop.wait()

    task = manager.background.spawn(stubborn(), "stubborn")
    await asyncio.sleep(0)  # started: a task cancelled before its first step just ends
    async with asyncio.timeout(5):
        await manager.close()
    assert "run task stubborn did not stop" in caplog.text
    stop.set()
    await task


async def test_a_run_the_bridge_forgot_fails_with_the_restart_sentence_and_keeps_its_logs(
    start_bridge: Callable[..., RunningBridge],
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    old_bridge = start_bridge(keepalive_interval_s=0.5)
    first = await make_manager(old_bridge.base_url)
    chat = new_chat(storage)
    started = await first.send(session_uuid=chat, text="slow please", user_id=user)
    live = first.consumed.get(started.run_id)
    await wait_for(lambda: "word3 " in live.view.answer)
    await first.close()
    kept = stored_seqs(storage, started.assistant_message_id)
    assert kept == list(range(1, len(kept) + 1)) and len(kept) >= 3

    new_bridge = start_bridge(keepalive_interval_s=0.5)  # a restarted bridge knows no runs
    second = await make_manager(new_bridge.base_url)
    failed = await finished(storage, started.assistant_message_id, timeout=10)

    assert failed.status == FAILED
    assert failed.error == BRIDGE_RESTARTED
    assert "agent service was restarted" in failed.error
    assert failed.content.startswith("word1 word2 word3")  # the text received so far
    # What was received is kept, and the app's own terminal event ends the log with the reason.
    assert stored_seqs(storage, failed.id) == [*kept, len(kept) + 1]
    ending = stored_view(storage, failed.id)
    assert ending.state == "failed" and ending.error == BRIDGE_RESTARTED
    assert second.consumed.for_session(chat) is None
    old = BridgeClient(old_bridge.base_url)
    try:
        await old.stop(started.run_id)
    finally:
        await old.aclose()


async def test_reattaching_to_a_run_whose_end_is_already_logged_finishes_it(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    # The app stopped after the terminal event was flushed but before the message was
    # finalised: the log already holds the whole run and the bridge has nothing newer.
    first = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await first.send(session_uuid=chat, text="hello", user_id=user)
    live = await run_to_end(first, started.run_id)
    storage.call_sync(
        messages.finish_message,
        message_id=started.assistant_message_id,
        content="",
        status=MessageStatus.RUNNING,
    )

    second = await make_manager(bridge.base_url)
    done = await finished(storage, started.assistant_message_id, timeout=10)
    assert done.status == SUCCESS
    assert done.content == "Echo: hello"
    assert done.total_tokens
    assert_every_seq_once(storage, done.id, live.view.last_seq)
    assert await second.session_states(user_id=user) == {}


async def test_messages_are_in_the_right_roles(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="think about it", user_id=user)
    live = await run_to_end(manager, started.run_id)
    branch = chat_messages(storage, chat)
    assert [m.role for m in branch] == [MessageRole.USER.value, MessageRole.ASSISTANT.value]
    assert live.view.thinking  # reasoning was shown
    assert branch[1].content == "After thinking: the answer is 42."
    assert stored_view(storage, branch[1].id) == live.view
