"""Messages queued while a run works: kept in order (a reload or an app restart loses none),
sent one after another as runs end, held by a stop; and guidance sent into a working run."""

from __future__ import annotations

from agent_chat.db import queue
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, chat_messages, finished, new_chat, run_to_end, wait_for
from tests.support.users import default_owner


def _texts(storage: Storage, chat: str) -> list[str]:
    return [m.content for m in chat_messages(storage, chat) if m.role == "USER"]


def _queued(storage: Storage, chat: str) -> list[str]:
    return [
        q.content
        for q in storage.call_sync(
            queue.list_queued, user_id=storage.call_sync(default_owner), session_uuid=chat
        )
    ]


async def test_queued_messages_go_in_order_when_the_run_ends(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="long 30 delay=0.05", user_id=user)
    assert await manager.queue(session_uuid=chat, text="then this", user_id=user) is None
    assert await manager.queue(session_uuid=chat, text="and this", user_id=user) is None
    assert _queued(storage, chat) == ["then this", "and this"]
    await run_to_end(manager, started.run_id)
    await wait_for(lambda: _texts(storage, chat)[-1:] == ["and this"], timeout=60)
    assert _texts(storage, chat) == ["long 30 delay=0.05", "then this", "and this"]
    assert _queued(storage, chat) == []
    last = [m for m in chat_messages(storage, chat) if m.role == "ASSISTANT"][-1]
    assert (await finished(storage, last.id)).content == "Echo: and this"


async def test_a_stop_holds_the_queue_and_an_idle_conversation_sends_at_once(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="long 200 delay=0.05", user_id=user)
    await manager.queue(session_uuid=chat, text="held", user_id=user)
    await manager.stop(started.run_id, user_id=user)
    await run_to_end(manager, started.run_id)
    assert _queued(storage, chat) == ["held"]  # the person took control: nothing sent
    sent = await manager.queue(session_uuid=chat, text="now", user_id=user)
    assert sent is not None  # nothing runs: the first queued one goes at once
    await run_to_end(manager, sent.run_id)
    assert _texts(storage, chat)[-1] == "held"


async def test_guidance_reaches_the_working_agent(
    bridge: RunningBridge,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_manager(bridge.base_url)
    chat = new_chat(storage)
    started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
    live = manager.consumed.get(started.run_id)
    await wait_for(lambda: live.view.clarify is not None)
    await manager.steer(started.run_id, "Pick the warmest one.", user_id=user)
    await manager.answer(started.run_id, live.view.clarify.clarify_id, "red", user_id=user)
    live = await run_to_end(manager, started.run_id)
    assert live.view.steers == (("Pick the warmest one.", "delivered"),)
    tool = [m for m in fake_model.requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "Pick the warmest one." in tool["content"]
