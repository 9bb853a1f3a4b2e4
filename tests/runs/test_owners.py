"""The RunManager acts for one person at a time: another person's conversation or run (by
run id too) is refused like a missing one, and their conversation changes never reach
someone else's reader, on the in-process bus and over Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_chat.db import pauses, queue
from agent_chat.db.errors import NotFound
from agent_chat.runs.bus import SessionChange
from agent_chat.runs.manager import RunRefused, UnknownRun
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, chat_messages, new_chat, run_to_end, wait_for


async def test_another_person_cannot_touch_a_run_or_its_conversation(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_bus_manager: MakeManager,
    user: int,
    other_user: int,
) -> None:
    manager = await make_bus_manager(bridge.base_url)
    chat = new_chat(storage)  # `user`'s
    mine, theirs = (
        manager.session_changes(user_id=user),
        manager.session_changes(user_id=other_user),
    )
    try:
        started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
        answer_id = started.assistant_message_id

        def open_pause() -> Any:
            return storage.call_sync(pauses.open_pause, message_id=answer_id)

        await wait_for(lambda: open_pause() is not None)
        pause = open_pause()
        run_id = started.run_id
        missing = "0" * 32
        # By run id: the same refusal as for a run that does not exist.
        for command in (
            lambda who, run: manager.stop(run, user_id=who),
            lambda who, run: manager.answer(run, pause.clarify_id, "red", user_id=who),
            lambda who, run: manager.steer(run, "go left", user_id=who),
            lambda who, run: manager.subscribe(run, user_id=who),
        ):
            with pytest.raises(UnknownRun) as refused:
                await command(other_user, run_id)
            with pytest.raises(UnknownRun) as unknown:
                await command(other_user, missing)
            assert str(refused.value) == str(unknown.value).replace(missing, run_id)
        assert await manager.session_states(user_id=other_user) == {}
        assert await manager.session_states(user_id=user) == {chat: "waiting"}
        # By conversation: it "does not exist" for them.
        for command in (
            lambda: manager.send(session_uuid=chat, text="mine now", user_id=other_user),
            lambda: manager.regenerate(session_uuid=chat, message_id=answer_id, user_id=other_user),
            lambda: manager.edit(
                session_uuid=chat,
                message_id=started.user_message_id,
                text="x",
                user_id=other_user,
            ),
        ):
            with pytest.raises(RunRefused, match="does not exist"):
                await command()
        with pytest.raises(NotFound):
            await manager.queue(session_uuid=chat, text="later", user_id=other_user)
        assert storage.call_sync(queue.list_queued, session_uuid=chat, user_id=user) == []
        # The run went on untouched: still waiting for its owner's answer.
        assert open_pause() is not None and open_pause().id == pause.id
        await manager.answer(run_id, pause.clarify_id, "blue", user_id=user)
        await run_to_end(manager, run_id)
        assert chat_messages(storage, chat)[-1].content == "You chose blue."
        # The owner heard the changes; the other person heard nothing at all.
        seen: list[SessionChange] = []
        while not seen or seen[-1].state:
            change = await mine.next(timeout=30)
            assert change is not None, f"no end after {seen}"
            seen.append(change)
        assert seen[0] == SessionChange(chat, "running", user)
        assert {c.owner_id for c in seen} == {user}
        await asyncio.sleep(0.3)
        assert theirs.take_ready() == []
    finally:
        mine.close()
        theirs.close()


async def test_the_run_limit_counts_each_persons_runs(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
    other_user: int,
) -> None:
    """`max_active_runs` is per person: someone else's runs neither block nor show."""
    manager = await make_manager(bridge.base_url, max_active_runs=1)
    first = new_chat(storage)
    # Long enough to be still going after the other person's whole run on a loaded machine.
    busy = await manager.send(session_uuid=first, text="long 3000 delay=0.02", user_id=user)
    with pytest.raises(RunRefused, match="1 conversation is already running"):
        await manager.send(session_uuid=new_chat(storage), text="hi", user_id=user)
    theirs = storage.call_sync(_chat_of, user_id=other_user)
    started = await manager.send(session_uuid=theirs, text="hello", user_id=other_user)
    await run_to_end(manager, started.run_id)
    await manager.stop(busy.run_id, user_id=user)
    await run_to_end(manager, busy.run_id)


def _chat_of(*, session: Any, user_id: int) -> str:
    from agent_chat.db.sessions import create_session

    return create_session(session=session, user_id=user_id).session_uuid
