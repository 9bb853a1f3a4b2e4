"""Redis restarts (empty: nothing persisted) while a run streams: two workers over one
database, the run consumed by one and followed on the other. The follower gets the whole
answer once (each seq once) and its end, a reader that starts after the restart too, and the
answer completes."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_chat.protocol.events import EventType, RunEvent
from agent_chat.runs.redis_watch import RedisRestartWatch
from agent_chat.runs.storage import Storage
from tests.support import runs
from tests.support.bridge import RunningBridge
from tests.support.redis import new_prefix, start_redis_on, stop_redis_on
from tests.support.runs import finished, new_chat, wait_for


@dataclass
class OwnRedis:
    folder: Path
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        start_redis_on(self.port, self.folder)

    def stop(self) -> None:
        stop_redis_on(self.port)


@contextlib.contextmanager
def own_redis(folder: Path) -> Iterator[OwnRedis]:
    """A redis-server of this test's own on a fixed port, so it can be restarted there."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = OwnRedis(folder, port)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _diff(got: str, want: str) -> str:
    a, b = got.split(), want.split()
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    return f"{len(a)} words vs {len(b)}; first difference at {first}: {a[first : first + 5] if first is not None else a[-3:]} vs {b[first : first + 5] if first is not None else b[-3:]}"


def _text(events: list[RunEvent]) -> str:
    return "".join(str(e.data.get("text", "")) for e in events if e.type == EventType.TEXT_DELTA)


async def test_a_followed_run_survives_a_redis_restart(
    bridge: RunningBridge, storage: Storage, fake_model_row: int, db_url: str, user: int,
    tmp_path: Path,
) -> None:  # fmt: skip
    with own_redis(tmp_path) as server:
        async with runs.managers(
            db_url, storage, redis_url=server.url, prefix=new_prefix()
        ) as make:
            one = await make(bridge.base_url)
            two = await make(bridge.base_url)
            chat = new_chat(storage)
            started = await one.send(session_uuid=chat, text="slow long 90", user_id=user)
            seen: list[RunEvent] = []

            async def follow() -> None:
                async for event in await two.subscribe(started.run_id, user_id=user):
                    seen.append(event)

            follower = asyncio.create_task(follow())
            await wait_for(lambda: len(_text(seen).split()) >= 20, 60)
            server.stop()
            await asyncio.sleep(1.0)  # a second without Redis
            server.start()  # empty
            await asyncio.sleep(0.5)
            late: list[RunEvent] = []

            async def late_reader() -> None:
                async for event in await two.subscribe(started.run_id, user_id=user):
                    late.append(event)

            reader = asyncio.create_task(late_reader())
            answer = await finished(storage, started.assistant_message_id, timeout=90)
            assert answer.status == "SUCCESS", answer.error
            async with asyncio.timeout(30):
                await follower
                await reader
            assert seen[-1].type == EventType.RUN_COMPLETED, seen[-3:]
            assert _text(seen).strip() == answer.content, _diff(_text(seen), answer.content)
            assert late[-1].type == EventType.RUN_COMPLETED
            assert _text(late).strip() == answer.content, _diff(_text(late), answer.content)
            numbered = [e.seq for e in seen if e.seq]
            assert numbered == sorted(set(numbered))


async def test_the_watch_notices_each_restart_once(tmp_path: Path) -> None:
    """`RedisRestartWatch` (what makes the app's tabs reconnect when Reflex's Redis lost
    their states): nothing at the first look, nothing while Redis is down, one call per
    new start."""
    calls: list[int] = []

    async def restarted() -> None:
        calls.append(1)

    with own_redis(tmp_path) as server:
        watch = RedisRestartWatch(server.url, restarted)
        try:
            assert not await watch.check() and not await watch.check()
            server.stop()
            assert not await watch.check()  # down
            server.start()
            assert await watch.check() and not await watch.check()
            assert calls == [1] and watch.restarts == 1
        finally:
            await watch.close()


async def test_a_stream_that_lost_its_beginning_is_filled_from_the_stored_log(
    bridge: RunningBridge, storage: Storage, fake_model_row: int, db_url: str, user: int,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Redis restarted from a file saved minutes ago while the consumer went on appending:
    the stream holds the run's later events only, and a stream takes no entry below its
    newest. A reader from the start gets the missing ones from the stored log, each seq once,
    in order, then the rest."""
    from agent_chat.db import logs
    from agent_chat.protocol.log_codec import stored_events

    with own_redis(tmp_path) as server:
        async with runs.managers(
            db_url, storage, redis_url=server.url, prefix=new_prefix()
        ) as make:
            one = await make(bridge.base_url)
            two = await make(bridge.base_url)
            started = await one.send(session_uuid=new_chat(storage), text="long 40", user_id=user)
            answer = await finished(storage, started.assistant_message_id, timeout=60)
            rows = storage.call_sync(logs.list_logs, message_id=started.assistant_message_id)
            stored = [e for r in rows for e in stored_events(r.seq, r.kind, r.content, r.meta_json)]
            bus = one.bus
            await wait_for(lambda: started.run_id not in one.consumed, 10)
            for kept in ([e for e in stored if e.seq > 20], []):
                # The later part only; then nothing but the end marker (Redis restarted
                # between the last event and the end).
                async with asyncio.timeout(10):
                    await bus._queue.join()  # the consumer's writes are done
                await bus.client.delete(bus.key(started.run_id))
                bus.open(started.run_id, kept)
                bus.close(started.run_id)
                async with asyncio.timeout(10):
                    await bus._queue.join()  # written (not only taken from the queue)
                got: list[RunEvent] = []
                subscription = await two.subscribe(started.run_id, user_id=user)
                async with asyncio.timeout(30):
                    async for event in subscription:
                        got.append(event)
                subscription.close()
                numbered = [e.seq for e in got if e.seq]
                assert numbered == list(range(1, stored[-1].seq + 1)), (len(kept), numbered)
                assert _text(got).strip() == answer.content, _diff(_text(got), answer.content)
                assert got[-1].type == EventType.RUN_COMPLETED
