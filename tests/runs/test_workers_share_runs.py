"""Several workers agree on which runs go on: two RunManagers, each a
worker of its own over one Redis and one database (as tests/runs/test_redis_workers.py).

A run one worker consumes goes on for the other too: its conversation reads "running" or
"waiting" there, a second run in it is refused there, a message queues behind it there and
goes when it ends, its question is answered from there. Two workers starting runs at once
in one conversation make one run, and the per-person limit holds across them (checked in
the turn's transaction under the person's row lock, db/running.py). One worker alone reads
its memory only: no database query for it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from agent_chat.db import pauses
from agent_chat.db.models import MessageStatus
from agent_chat.db.running import RUN_ACTIVE, TOO_MANY_RUNS
from agent_chat.runs.manager import RunManager, RunRefused, StartedRun
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, chat_messages, finished, new_chat, wait_for


def _answers(storage: Storage, chat: str) -> list[str]:
    return [m.content for m in chat_messages(storage, chat) if m.role == "ASSISTANT"]


async def _states(manager: RunManager, user: int) -> dict[str, str]:
    return await manager.session_states(user_id=user)


async def _until(
    manager: RunManager, user: int, chat: str, reached: Callable[[str], bool], what: str
) -> None:
    deadline = asyncio.get_running_loop().time() + 30
    while not reached((await _states(manager, user)).get(chat, "")):
        assert asyncio.get_running_loop().time() < deadline, f"{chat} never {what}"
        await asyncio.sleep(0.05)


async def _until_state(manager: RunManager, user: int, chat: str, state: str) -> None:
    await _until(manager, user, chat, lambda now: now == state, repr(state))


async def _one_starts(*sends: Awaitable[StartedRun]) -> tuple[StartedRun, RunRefused]:
    """Sends raced on two workers: exactly one started, the other refused (which, said)."""
    results = await asyncio.gather(*sends, return_exceptions=True)
    refused = [r for r in results if isinstance(r, RunRefused)]
    started = [r for r in results if not isinstance(r, BaseException)]
    assert len(started) == 1 and len(refused) == 1, results
    return started[0], refused[0]


async def test_a_run_one_worker_consumes_goes_on_for_the_other(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
) -> None:
    one = await make_worker(bridge.base_url)
    two = await make_worker(bridge.base_url)
    chat = new_chat(storage)
    started = await one.send(session_uuid=chat, text="ask me", user_id=user)
    assert one.consumed.get(started.run_id) is not None and two.consumed.get(started.run_id) is None
    await _until_state(two, user, chat, "waiting")  # the question, seen by the other worker
    going = await two.running_in(chat, user_id=user)
    assert going is not None
    assert (going.run_id, going.message_id) == (started.run_id, started.assistant_message_id)
    assert await two.run_state(started.run_id, user_id=user) == "waiting"
    assert await two.running_in(chat, user_id=user + 1000) is None  # nobody else's
    assert await two.run_state(started.run_id, user_id=user + 1000) == ""
    with pytest.raises(RunRefused, match="still running"):
        await two.send(session_uuid=chat, text="a second run", user_id=user)
    with pytest.raises(RunRefused, match="stop it before resetting"):
        await two.reset(session_uuid=chat, user_id=user)
    # Queued on the other worker; sent by the consuming one when its run ends.
    assert await two.queue(session_uuid=chat, text="then this", user_id=user) is None
    pause = storage.call_sync(pauses.open_pause, message_id=started.assistant_message_id)
    assert pause is not None
    await two.answer(started.run_id, pause.clarify_id, "red", user_id=user)
    # The answer resumes it: "running" may already be over (the scripted model is quick, and
    # the queued message may be done too), so only leaving "waiting" is certain here.
    await _until(two, user, chat, lambda now: now != "waiting", "left 'waiting'")
    done = await finished(storage, started.assistant_message_id)
    assert done.status == MessageStatus.SUCCESS and done.content == "You chose red."
    await wait_for(lambda: _answers(storage, chat)[-1:] == ["Echo: then this"], timeout=60)
    assert _answers(storage, chat) == ["You chose red.", "Echo: then this"]
    await _until_state(two, user, chat, "")
    assert await two.running_in(chat, user_id=user) is None
    assert await one.running_in(chat, user_id=user) is None


@pytest.mark.parametrize("rounds", [4])
async def test_two_workers_starting_at_once_in_one_conversation_make_one_run(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
    rounds: int,
) -> None:
    one = await make_worker(bridge.base_url)
    two = await make_worker(bridge.base_url)
    for _ in range(rounds):
        chat = new_chat(storage)
        started, refused = await _one_starts(
            one.send(session_uuid=chat, text="long 20 delay=0.02", user_id=user),
            two.send(session_uuid=chat, text="long 20 delay=0.02", user_id=user),
        )
        assert "still running" in str(refused) and refused.code == RUN_ACTIVE
        running = [m for m in chat_messages(storage, chat) if m.role == "ASSISTANT"]
        assert [m.run_id for m in running] == [started.run_id]  # one answer, one run
        assert len([m for m in chat_messages(storage, chat) if m.role == "USER"]) == 1
        await finished(storage, started.assistant_message_id)


async def test_the_per_person_limit_holds_across_workers(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
) -> None:
    one = await make_worker(bridge.base_url, max_active_runs=1)
    two = await make_worker(bridge.base_url, max_active_runs=1)
    first, second = new_chat(storage), new_chat(storage)
    started, refused = await _one_starts(
        one.send(session_uuid=first, text="long 40 delay=0.02", user_id=user),
        two.send(session_uuid=second, text="long 40 delay=0.02", user_id=user),
    )
    assert "the limit is 1" in str(refused)
    assert refused.code == TOO_MANY_RUNS  # the HTTP API's 429, whichever worker refused
    assert await one.working_runs(user_id=user) == 1 == await two.working_runs(user_id=user)
    going = await two.running_in(first, user_id=user) or await two.running_in(second, user_id=user)
    assert going is not None and going.run_id == started.run_id  # seen running by both
    await finished(storage, started.assistant_message_id)
    # A waiting run does not count: a question holds no model.
    asked = await two.send(session_uuid=first, text="ask me", user_id=user)
    await _until_state(one, user, first, "waiting")
    later = await one.send(session_uuid=second, text="hello", user_id=user)
    assert (await finished(storage, later.assistant_message_id)).content == "Echo: hello"
    await two.stop(asked.run_id, user_id=user)
    await finished(storage, asked.assistant_message_id)


async def test_one_worker_reads_its_memory_only(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    assert not manager.several_workers
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
    await _until_state(manager, user, chat, "waiting")
    calls: list[str] = []
    real = manager.storage.call

    async def counted(fn, /, **kwargs):
        calls.append(fn.__name__)
        return await real(fn, **kwargs)

    manager.storage.call = counted  # type: ignore[method-assign]
    try:
        assert await manager.session_states(user_id=user) == {chat: "waiting"}
        assert (await manager.running_in(chat, user_id=user)).run_id == started.run_id
        assert await manager.run_state(started.run_id, user_id=user) == "waiting"
        assert await manager.running_in(new_chat(storage), user_id=user) is None
        assert await manager.working_runs(user_id=user) == 0
    finally:
        manager.storage.call = real  # type: ignore[method-assign]
    assert calls == []
    await manager.stop(started.run_id, user_id=user)
    await finished(storage, started.assistant_message_id)
