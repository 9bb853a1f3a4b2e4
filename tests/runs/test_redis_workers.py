"""Several workers over one Redis and one database: each a RunManager
with its own Redis client, bus and leases, over a real bridge and the scripted model.

A reader on one worker follows a run another consumes, every seq once; conversation
changes reach every worker; exactly one worker consumes a run; and when the consuming
worker is killed (`kill -9` of a worker process) another takes the run over within
seconds, with every seq stored once and one final write."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent_chat.db import messages
from agent_chat.db.models import MessageStatus
from agent_chat.protocol.events import TERMINAL_EVENTS, RunEvent
from agent_chat.protocol.reducer import replay
from agent_chat.runs.bus import SessionChange
from agent_chat.runs.manager import RunManager
from agent_chat.runs.redis_bus import RedisRunBus
from agent_chat.runs.storage import Storage
from tests.support.bridge import RunningBridge
from tests.support.processes import ROOT
from tests.support.runs import (
    MakeManager,
    assert_every_seq_once,
    finished,
    message,
    new_chat,
    stored_seqs,
    wait_for,
)

LEASE_S = 1.5  # short, so a takeover is quick; renewed every 0.5 s


async def _read_all(subscription, timeout: float = 60.0) -> list[RunEvent]:
    async def read() -> list[RunEvent]:
        return [event async for event in subscription]

    return await asyncio.wait_for(read(), timeout)


def _numbered(events: list[RunEvent]) -> list[int]:
    return [e.seq for e in events if e.seq]


def _bus(manager: RunManager) -> RedisRunBus:
    assert isinstance(manager.bus, RedisRunBus)
    return manager.bus


async def test_a_reader_on_another_worker_follows_the_run_once(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
) -> None:
    one = await make_worker(bridge.base_url)
    two = await make_worker(bridge.base_url)
    started = await one.send(
        session_uuid=new_chat(storage), text="long 60 delay=0.01", user_id=user
    )
    events = await _read_all(await two.subscribe(started.run_id, user_id=user))
    # The end comes after the outcome is stored, whichever worker reads.
    assert message(storage, started.assistant_message_id).status == MessageStatus.SUCCESS
    seqs = _numbered(events)
    assert seqs == list(range(1, seqs[-1] + 1))  # every event once, in order
    assert events[-1].type in TERMINAL_EVENTS
    view = replay([e.as_dict() for e in events])
    assert view.state == "succeeded" and view.answer.startswith("word1 word2")
    assert len(view.answer.split()) == 60
    assert two.consumed.get(started.run_id) is None  # worker two never consumed it
    assert_every_seq_once(storage, started.assistant_message_id, seqs[-1])
    # Later readers on either worker, from any seq: the stream outlives the run.
    tail = await _read_all(await two.subscribe(started.run_id, after_seq=10, user_id=user))
    assert _numbered(tail) == seqs[10:]
    assert _numbered(await _read_all(await one.subscribe(started.run_id, user_id=user))) == seqs
    assert _bus(one).appends_refused == 0 == _bus(two).appends_refused  # none sent twice


async def test_a_run_that_finishes_while_a_takeover_looks_is_not_taken_over(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The watch lists the running answers, then takes a lease: in between, the consumer
    may finish the run and release its lease. Taking it then re-sent the stream (9 refused
    appends under load in CI) and finished the run a second time."""
    one = await make_worker(bridge.base_url)
    two = await make_worker(bridge.base_url)
    started = await one.send(session_uuid=new_chat(storage), text="hello", user_id=user)
    listed = message(storage, started.assistant_message_id)  # as the watch read it: RUNNING
    assert listed.status == MessageStatus.RUNNING
    done = await finished(storage, started.assistant_message_id)
    await _bus(one).flush()
    # Worker two's watch looks now, with the listing read while the answer was RUNNING:
    # the lease is free again because the run ended.
    with monkeypatch.context() as patch:
        patch.setattr(messages, "running_messages", lambda *, session: [listed])
        await two.takeover.check()
    await _bus(two).flush()
    assert two.consumed.get(started.run_id) is None
    assert _bus(two).appends_refused == 0
    again = message(storage, started.assistant_message_id)  # finished once, by one
    assert (again.status, again.content) == (done.status, done.content)
    assert_every_seq_once(storage, done.id, stored_seqs(storage, done.id)[-1])


async def test_conversation_changes_reach_every_worker(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
) -> None:
    one = await make_worker(bridge.base_url)
    two = await make_worker(bridge.base_url)
    chat = new_chat(storage)
    changes = two.session_changes(user_id=user)
    try:
        started = await one.send(session_uuid=chat, text="ask me", user_id=user)
        seen = []
        while len(seen) < 2:
            change = await changes.next(timeout=30)
            assert change is not None, f"no change after {seen}"
            seen.append(change)
        assert seen == [SessionChange(chat, "running", user), SessionChange(chat, "waiting", user)]
        await one.stop(started.run_id, user_id=user)
        after = []
        while not after or after[-1].state:
            change = await changes.next(timeout=30)
            assert change is not None, f"no end after {after}"
            after.append(change)
        assert after[-1] == SessionChange(chat, "", user)
    finally:
        changes.close()


async def test_exactly_one_worker_consumes_a_run(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    user: int,
) -> None:
    # The workers share this process's event loop, where starting `three` blocks it for a
    # moment: with the short LEASE_S a loaded machine let one's lease lapse meanwhile (a
    # fresh-clone run saw three take the run over), which separate processes never share.
    lease = 2 * LEASE_S
    one = await make_worker(bridge.base_url, redis_lease_s=lease)
    two = await make_worker(bridge.base_url, redis_lease_s=lease)
    started = await one.send(
        session_uuid=new_chat(storage), text="long 600 delay=0.02", user_id=user
    )
    await asyncio.sleep(2 * lease)  # renewed meanwhile: never free for a takeover
    await two.takeover.check()
    three = await make_worker(bridge.base_url, redis_lease_s=lease)  # starts re-attaching
    assert two.consumed.get(started.run_id) is None and three.consumed.get(started.run_id) is None
    assert one.consumed.get(started.run_id) is not None
    holder = await one.leases.leases.holder(started.run_id)
    assert holder == one.leases.leases.owner
    done = await finished(storage, started.assistant_message_id)
    assert done.status == MessageStatus.SUCCESS
    seqs = _numbered(await _read_all(await three.subscribe(started.run_id, user_id=user)))
    assert_every_seq_once(storage, started.assistant_message_id, seqs[-1])
    await wait_for(lambda: one.consumed.get(started.run_id) is None)
    await asyncio.sleep(0.2)  # the release runs in the background
    assert await one.leases.leases.holder(started.run_id) is None  # given back at the end


async def test_a_run_whose_lease_is_lost_is_given_up_and_taken_over(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    redis_url: str,
    user: int,
) -> None:
    """A worker that stalled past its lease (here: the lease is taken from it) stops
    consuming without finishing the run; a worker takes it over; nothing is lost or
    doubled, in the log or for a reader."""
    one = await make_worker(bridge.base_url, redis_lease_s=LEASE_S)
    two = await make_worker(bridge.base_url, redis_lease_s=LEASE_S)
    started = await one.send(
        session_uuid=new_chat(storage), text="long 150 delay=0.02", user_id=user
    )
    reader = asyncio.create_task(_read_all(await two.subscribe(started.run_id, user_id=user)))
    await wait_for(lambda: len(stored_seqs(storage, started.assistant_message_id)) > 5)
    key = one.leases.leases.key(started.run_id)
    async with Redis.from_url(redis_url, decode_responses=True) as admin:
        await admin.set(key, "a-stalled-worker-s-successor", px=int(LEASE_S * 1000))
    await wait_for(lambda: one.consumed.get(started.run_id) is None, timeout=3 * LEASE_S)
    done = await finished(storage, started.assistant_message_id, timeout=60)
    assert done.status == MessageStatus.SUCCESS
    assert len(done.content.split()) == 150
    seqs = _numbered(await reader)
    assert seqs == list(range(1, seqs[-1] + 1))
    assert_every_seq_once(storage, started.assistant_message_id, seqs[-1])


def _start_worker(
    db_url: str, bridge_url: str, redis_url: str, prefix: str, chat: str, text: str, log: Path
) -> tuple[subprocess.Popen, dict]:
    args = [sys.executable, "-m", "tests.support.redis_worker"]
    args += [db_url, bridge_url, redis_url, prefix, chat, text]
    with log.open("ab") as err:
        process = subprocess.Popen(
            args, cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=err, text=True
        )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, f"the worker said nothing:\n{log.read_text()[-3000:]}"
    return process, json.loads(line)


async def test_kill_9_of_the_consuming_worker_another_takes_the_run_over(
    bridge: RunningBridge,
    storage: Storage,
    fake_model_row: int,
    make_worker: MakeManager,
    db_url: str,
    redis_url: str,
    tmp_path: Path,
    user: int,
) -> None:
    two = await make_worker(bridge.base_url, redis_lease_s=LEASE_S)
    chat = new_chat(storage)
    process, run = await asyncio.to_thread(
        _start_worker,
        db_url,
        bridge.base_url,
        redis_url,
        _bus(two).prefix,
        chat,
        "long 200 delay=0.03",
        tmp_path / "worker.log",
    )
    try:
        reader = asyncio.create_task(_read_all(await two.subscribe(run["run_id"], user_id=user)))
        await wait_for(lambda: len(stored_seqs(storage, run["message_id"])) > 10)
        assert two.consumed.get(run["run_id"]) is None  # the worker process consumes it
        process.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        await asyncio.to_thread(process.wait, 10)
        await wait_for(lambda: two.consumed.get(run["run_id"]) is not None, timeout=10)
        took_over_s = time.monotonic() - killed_at
        assert took_over_s < LEASE_S + 3, f"taken over after {took_over_s:.1f} s"
        done = await finished(storage, run["message_id"], timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert done.status == MessageStatus.SUCCESS
    assert len(done.content.split()) == 200  # the answer completed
    seqs = _numbered(await reader)
    assert seqs == list(range(1, seqs[-1] + 1))  # the reader: no gap, nothing twice
    assert_every_seq_once(storage, run["message_id"], seqs[-1])
    # One final write: the dead worker never finished it, and the run is over for two too.
    await wait_for(lambda: two.consumed.get(run["run_id"]) is None)
