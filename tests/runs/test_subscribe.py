"""`RunManager.subscribe` and `session_changes`: the one way to follow a run. Every reader,
whenever it starts, gets the run's events once, in order, ending with the terminal event;
a finished run replays from the stored log; conversations' state changes reach every
reader. Over a real bridge and the scripted fake model."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from agent_chat.db import sessions
from agent_chat.protocol.events import TERMINAL_EVENTS, EventType, RunEvent
from agent_chat.protocol.reducer import replay
from agent_chat.runs.bus import EVERYONE, LocalRunBus, RunBus, SessionChange
from agent_chat.runs.manager import UnknownRun
from agent_chat.runs.redis_bus import redis_run_bus
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge
from tests.support.redis import new_prefix
from tests.support.runs import MakeManager
from tests.support.users import default_owner


def _new_chat(storage: Storage) -> str:
    return storage.call_sync(
        sessions.create_session, user_id=storage.call_sync(default_owner)
    ).session_uuid


async def _read_all(subscription, timeout: float = 30.0) -> list[RunEvent]:
    async def read() -> list[RunEvent]:
        return [event async for event in subscription]

    return await asyncio.wait_for(read(), timeout)


def _numbered(events: list[RunEvent]) -> list[int]:
    return [e.seq for e in events if e.seq]


async def test_readers_that_join_early_late_or_after_the_end_see_the_same_run(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_bus_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_bus_manager(bridge.base_url)
    started = await manager.send(session_uuid=_new_chat(storage), text="slow please", user_id=user)
    early = asyncio.create_task(_read_all(await manager.subscribe(started.run_id, user_id=user)))
    live = manager.consumed.get(started.run_id)
    async for event in await manager.subscribe(
        started.run_id, user_id=user
    ):  # until the third word is in
        if event.seq and "word3 " in live.view.answer:
            break
    late = asyncio.create_task(_read_all(await manager.subscribe(started.run_id, user_id=user)))
    tail = asyncio.create_task(
        _read_all(await manager.subscribe(started.run_id, after_seq=5, user_id=user))
    )
    early_events, late_events, tail_events = await asyncio.gather(early, late, tail)
    stored_events = await _read_all(
        await manager.subscribe(started.run_id, user_id=user)
    )  # the run is over

    seqs = _numbered(early_events)
    assert seqs == list(range(1, seqs[-1] + 1))  # every event once, in order
    assert early_events[-1].type in TERMINAL_EVENTS
    assert _numbered(late_events) == seqs
    assert _numbered(tail_events) == seqs[5:]
    final = replay([e.as_dict() for e in early_events])
    assert final.answer.startswith("word1 word2 word3") and final.state == "succeeded"
    # The stored log merges deltas into fewer rows, but replays to the same view.
    assert stored_events[-1].type in TERMINAL_EVENTS
    assert replay([e.as_dict() for e in stored_events]) == final
    assert replay([e.as_dict() for e in late_events]) == final


async def test_session_changes_report_running_waiting_and_the_end(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_bus_manager: MakeManager,
    user: int,
) -> None:
    manager = await make_bus_manager(bridge.base_url)
    chat = _new_chat(storage)
    changes = manager.session_changes(user_id=user)
    try:
        started = await manager.send(session_uuid=chat, text="ask me", user_id=user)
        seen = []
        while len(seen) < 2:
            change = await changes.next(timeout=30)
            assert change is not None, f"no change after {seen}"
            seen.append(change)
        assert seen == [SessionChange(chat, "running", user), SessionChange(chat, "waiting", user)]
        assert await manager.session_states(user_id=user) == {chat: "waiting"}
        await manager.stop(started.run_id, user_id=user)
        after = []
        while not after or after[-1].state:
            change = await changes.next(timeout=30)
            assert change is not None, f"no end after {after}"
            after.append(change)
        # The stop cancels the question first (running again), then the run ends.
        assert after in (
            [SessionChange(chat, "", user)],
            [SessionChange(chat, "running", user), SessionChange(chat, "", user)],
        )
        assert await manager.session_states(user_id=user) == {}
    finally:
        changes.close()


async def test_an_unknown_run_cannot_be_followed(
    bridge: RunningBridge, storage: Storage, make_bus_manager: MakeManager, user: int
) -> None:
    manager = await make_bus_manager(bridge.base_url)
    with pytest.raises(UnknownRun, match="There is no run 'no-such-run'"):
        await manager.subscribe("no-such-run", user_id=user)


@pytest.fixture(params=["local", "redis"])
async def any_bus(request: pytest.FixtureRequest, storage: Storage) -> AsyncIterator[RunBus]:
    """A bus on its own, started: in-process, or over the session's redis-server."""
    if request.param == "local":
        bus: RunBus = LocalRunBus()
    else:
        bus, _ = redis_run_bus(
            request.getfixturevalue("redis_url"),
            storage=storage,
            stream_ttl_s=60,
            lease_s=5,
            prefix=new_prefix(),
        )
    await bus.start()
    yield bus
    await bus.aclose()


async def test_a_waiting_reader_loses_nothing_when_its_wait_is_cancelled(any_bus: RunBus) -> None:
    bus = any_bus
    bus.open("r")
    reader = bus.subscribe("r")
    assert reader is not None
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reader.__anext__(), 0.05)
    bus.publish("r", RunEvent(1, EventType.TEXT_DELTA, {"text": "a"}))
    bus.publish("r", RunEvent(0, EventType.BRIDGE_LINK, {"connected": False}))
    bus.publish("r", RunEvent(2, EventType.RUN_COMPLETED, {}))
    bus.close("r")
    assert [e.seq for e in await _read_all(reader, 10)] == [1, 0, 2]
    late = bus.subscribe("r")
    if isinstance(bus, LocalRunBus):
        assert late is None  # closed channels are dropped (the manager replays the log)
    else:  # the stream outlives the run (stream_ttl_s): replayed from it, link event too
        assert [e.seq for e in await _read_all(late, 10)] == [1, 0, 2]
        assert [e.seq for e in await _read_all(bus.subscribe("r", after_seq=1), 10)] == [0, 2]


async def test_a_closed_session_reader_stops_receiving(any_bus: RunBus) -> None:
    bus = any_bus
    first, second = bus.session_changes(1), bus.session_changes(1)
    first.close()
    bus.publish_session(SessionChange("s", "running", 1))
    assert await second.next(timeout=5) == SessionChange("s", "running", 1)
    assert first.take_ready() == []
    second.close()


async def test_a_session_reader_hears_only_its_persons_changes(any_bus: RunBus) -> None:
    """The owner id travels with the change (over Redis in the published payload): a
    reader for person 2 never receives person 1's."""
    bus = any_bus
    alice, bob = bus.session_changes(1), bus.session_changes(2)
    try:
        bus.publish_session(SessionChange("a-chat", "running", 1))
        bus.publish_session(SessionChange("b-chat", "waiting", 2))
        bus.publish_session(SessionChange("nobodys", "running", None))
        bus.publish_session(SessionChange("a-chat", "", 1))
        bus.publish_session(SessionChange("", "bridge", EVERYONE))  # for every reader
        assert [await bob.next(timeout=5) for _ in range(2)] == [
            SessionChange("b-chat", "waiting", 2),
            SessionChange("", "bridge", EVERYONE),
        ]
        assert [await alice.next(timeout=5) for _ in range(3)] == [
            SessionChange("a-chat", "running", 1),
            SessionChange("a-chat", "", 1),
            SessionChange("", "bridge", EVERYONE),
        ]
        await asyncio.sleep(0.3)  # anything more would have arrived by now
        assert bob.take_ready() == [] and alice.take_ready() == []
    finally:
        alice.close()
        bob.close()
