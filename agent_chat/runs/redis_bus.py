"""The run bus of several workers: each run's events in a Redis stream, conversation states
on a pub/sub channel (`AGENT_CHAT_REDIS_URL`; docs/architecture.md, "Several workers").

Writing: the worker that consumes a run appends each event once, as entry `<seq>-0`, so a
second append of a seq (a takeover re-reading the bridge from the last stored seq) is
refused by Redis itself. Entries without a seq go after the stream's newest entry as
`<top seq>-<n>` (a script reads the top and appends atomically): the app-side `bridge_link`
event ("Reconnecting…"), the open marker (the stream exists from the run's start) and the
end marker (written after the outcome is stored, like the in-process channel's close).
Every write goes through one ordered queue per worker, so a run's stream is opened before
its "running" change is announced and its end follows its last event. A stream expires
`stream_ttl_s` after its end marker.

Reading: per worker and run, one task mirrors the stream (XREAD from the last id read,
blocking) into an in-process channel, which every local subscriber reads from its own seq
exactly as from `LocalRunBus` (`bus.ChannelSubscription`): the same filtering, batching and
cancel safety. A run with no stream (over and expired, or unknown) is replayed from the
stored log; a run still RUNNING in the database whose stream is not there yet is waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import uuid
from collections.abc import Iterable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from agent_chat.db import messages
from agent_chat.db.models import MessageStatus
from agent_chat.protocol.events import RunEvent
from agent_chat.runs.bus import SessionChange, SessionChanges, _Channel
from agent_chat.runs.leases import RedisLeases
from agent_chat.runs.redis_feed import RunMirror, decode_event
from agent_chat.runs.redis_subscription import RedisSubscription
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)

# Append after the stream's newest entry: `<its seq>-*` (Redis picks the next sub-id).
_APPEND_AT_TOP = """
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local ms = '0'
if top[1] then ms = string.match(top[1][1], '^(%d+)-') end
return redis.call('XADD', KEYS[1], ms .. '-*', unpack(ARGV))
"""


def _is_running(*, session: Any, run_id: str) -> bool:
    message = messages.message_by_run(session=session, run_id=run_id)
    return message is not None and message.status == MessageStatus.RUNNING.value


def _encode(event: RunEvent) -> str:
    return json.dumps({"seq": event.seq, "type": event.type, "data": event.data})


class RedisRunBus:
    def __init__(
        self,
        client: Redis,
        *,
        storage: Storage,
        prefix: str = "agent_chat",
        stream_ttl_s: float = 3600.0,
    ) -> None:
        self.client = client
        self.storage = storage
        self.prefix = prefix
        self.stream_ttl_s = stream_ttl_s
        self.sessions_channel = f"{prefix}:sessions"
        self._queue: asyncio.Queue[tuple[str, Any, Any]] = asyncio.Queue()
        self._writer: asyncio.Task | None = None
        self._listener: asyncio.Task | None = None
        self._listening = asyncio.Event()
        self._readers: set[SessionChanges] = set()
        self._mirrors: dict[str, RunMirror] = {}
        self._opened: set[str] = set()  # runs this worker consumes (their stream is coming)
        self.appends_refused = 0  # seqs already in their stream (a takeover's re-reads)

    def key(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:events"

    # ---- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Check Redis answers and listen for conversation changes before anything runs."""
        try:
            await self.client.ping()
        except RedisError as exc:
            raise RuntimeError(f"Redis (AGENT_CHAT_REDIS_URL) does not answer: {exc}") from exc
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_loop(), name="redis-bus-writer")
            self._listener = asyncio.create_task(self._listen_loop(), name="redis-bus-listener")
            async with asyncio.timeout(10):
                await self._listening.wait()

    async def flush(self) -> None:
        """Wait until every queued write reached Redis."""
        await self._queue.join()

    async def aclose(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await self.flush()
        tasks = [t for t in (self._writer, self._listener) if t is not None]
        tasks += [m.task for m in self._mirrors.values() if m.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._writer = self._listener = None
        self._mirrors.clear()
        await self.client.aclose()

    # ---- writing (the consuming worker) ------------------------------------------------

    def open(self, run_id: str, history: Iterable[RunEvent] = ()) -> None:
        self._opened.add(run_id)
        self._queue.put_nowait(("open", run_id, list(history)))

    def publish(self, run_id: str, event: RunEvent) -> None:
        self._queue.put_nowait(("event", run_id, event))

    def close(self, run_id: str) -> None:
        self._opened.discard(run_id)
        self._queue.put_nowait(("close", run_id, None))

    def publish_session(self, change: SessionChange) -> None:
        self._queue.put_nowait(("session", change, None))

    async def _write_loop(self) -> None:
        backoff = 0.2
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < 500:
                batch.append(self._queue.get_nowait())
            while True:
                try:
                    await self._write(batch)
                    backoff = 0.2
                    break
                except RedisError as exc:
                    # Appends are idempotent (the ids): the whole batch is sent again.
                    log.warning("writing to Redis failed (%s); retrying in %.1f s", exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                except Exception:
                    log.exception("writing to Redis failed; %d writes dropped", len(batch))
                    break
            for _ in batch:
                self._queue.task_done()

    async def _write(self, batch: list[tuple[str, Any, Any]]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for op, target, value in batch:
            if op == "session":
                payload = json.dumps(
                    {
                        "session_uuid": target.session_uuid,
                        "state": target.state,
                        "owner_id": target.owner_id,  # readers hear only their own
                    }
                )
                pipe.publish(self.sessions_channel, payload)
                continue
            key = self.key(target)
            if op == "open":
                pipe.persist(key)  # a run re-opened after an end keeps its stream
                for event in value:
                    pipe.xadd(key, {"e": _encode(event)}, id=f"{event.seq}-0")
                pipe.eval(_APPEND_AT_TOP, 1, key, "open", "1")
            elif op == "close":
                pipe.eval(_APPEND_AT_TOP, 1, key, "end", "1")
                pipe.expire(key, int(self.stream_ttl_s))
            elif value.seq:
                pipe.xadd(key, {"e": _encode(value)}, id=f"{value.seq}-0")
            else:  # no seq (bridge_link): after what is there
                pipe.eval(_APPEND_AT_TOP, 1, key, "e", _encode(value))
        for result in await pipe.execute(raise_on_error=False):
            if isinstance(result, ResponseError):
                if "equal or smaller" in str(result):
                    self.appends_refused += 1  # that seq is in the stream already
                else:
                    log.warning("a Redis write was refused: %s", result)
            elif isinstance(result, Exception):
                raise result

    # ---- reading (any worker) ----------------------------------------------------------

    def subscribe(self, run_id: str, after_seq: int = 0) -> RedisSubscription:
        return RedisSubscription(self, run_id, after_seq)

    async def mirror(self, run_id: str) -> RunMirror | None:
        """This worker's mirror of the run's stream, or None when the run has no stream
        and is not running (replay it from the database)."""
        checks = 0
        while True:
            mirror = self._mirrors.get(run_id)
            if mirror is not None and not mirror.channel.closed:
                return mirror
            if run_id in self._opened or await self.client.exists(self.key(run_id)):
                break
            # RUNNING without a stream: its consumer is opening it (or taking it over).
            if checks % 10 == 0 and not await self.storage.call(_is_running, run_id=run_id):
                return None
            checks += 1
            await asyncio.sleep(0.1)
        mirror = self._mirrors.get(run_id)
        if mirror is None or mirror.channel.closed:
            mirror = RunMirror(self, run_id, _Channel(()))
            self._mirrors[run_id] = mirror
            mirror.start()
        return mirror

    def release_mirror(self, mirror: RunMirror) -> None:
        """A reader is done: the last one stops the mirror (a new reader starts another)."""
        mirror.readers -= 1
        if mirror.readers <= 0 and not mirror.channel.closed:
            mirror.stop()
            if self._mirrors.get(mirror.run_id) is mirror:
                del self._mirrors[mirror.run_id]

    def mirror_ended(self, mirror: RunMirror) -> None:
        if self._mirrors.get(mirror.run_id) is mirror:
            del self._mirrors[mirror.run_id]

    async def stream_gone(self, run_id: str) -> bool:
        """The stream vanished (expired, or Redis lost it) and nobody will write it again."""
        if run_id in self._opened or await self.client.exists(self.key(run_id)):
            return False
        return not await self.storage.call(_is_running, run_id=run_id)

    # ---- conversation changes ----------------------------------------------------------

    def session_changes(self, user_id: int) -> SessionChanges:
        reader = SessionChanges(self, user_id)
        self._readers.add(reader)
        return reader

    async def _listen_loop(self) -> None:
        backoff = 0.2
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.sessions_channel)
                self._listening.set()
                backoff = 0.2
                async for message in pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    data = json.loads(message["data"])
                    owner = data.get("owner_id")
                    change = SessionChange(
                        str(data["session_uuid"]),
                        str(data["state"]),
                        int(owner) if owner is not None else None,
                    )
                    for reader in list(self._readers):
                        reader.put(change)
            except RedisError as exc:
                # Changes published meanwhile are lost (pub/sub keeps nothing): a badge may
                # lag until the conversation's next change or the tab's next load.
                log.warning("listening to Redis failed (%s); again in %.1f s", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()


def redis_run_bus(
    url: str, *, storage: Storage, stream_ttl_s: float, lease_s: float, prefix: str = "agent_chat"
) -> tuple[RedisRunBus, RedisLeases]:
    """The bus and the leases of one worker, over one Redis client (the bus closes it)."""
    client = Redis.from_url(url, decode_responses=True)
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    bus = RedisRunBus(client, storage=storage, prefix=prefix, stream_ttl_s=stream_ttl_s)
    return bus, RedisLeases(client, owner=owner, prefix=prefix, ttl_s=lease_s)


__all__ = ["RedisRunBus", "RedisSubscription", "decode_event", "redis_run_bus"]
