"""A reader's position in a run on the several-workers bus (runs/redis_bus.py): the
worker's mirror of the run's Redis stream, or the stored log when the run has no stream;
gaps Redis left (a restart from an older file) filled from the stored log."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from agent_chat.db import logs, messages
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.log_codec import stored_events
from agent_chat.runs.bus import ChannelSubscription
from agent_chat.runs.redis_feed import RunMirror
from agent_chat.runs.replay import StoredReplay
from agent_chat.runs.storage import Storage

log = logging.getLogger("agent_chat.runs.redis_bus")


class MirrorSource(Protocol):
    """What a subscription needs of `RedisRunBus`."""

    storage: Storage

    async def mirror(self, run_id: str) -> RunMirror | None: ...

    def release_mirror(self, mirror: RunMirror) -> None: ...


def _stored_between(*, session: Any, run_id: str, after: int, before: int) -> list[RunEvent]:
    """The stored events with `after` < seq < `before`, one per seq (merged rows split)."""
    message = messages.message_by_run(session=session, run_id=run_id)
    if message is None:
        return []
    rows = logs.list_logs(session=session, message_id=message.id)
    found = [e for r in rows for e in stored_events(r.seq, r.kind, r.content, r.meta_json)]
    return [e for e in found if after < e.seq < before]


class RedisSubscription:
    """A reader's position in a run, resolved on first use: the mirrored stream, or the
    stored log when the run has no stream.

    A stream can miss its beginning: Redis restarted without the newest entries (its file is
    saved every few minutes) while the run's consumer went on appending after them, and a
    stream takes no entry below its newest. A reader then meets a gap in the seqs, which is
    filled from the stored log before the events after it (`_fill`); a stream that ends
    before the run's last stored event (only its end marker came after the restart) is
    followed by the stored rest (`_stored_after`)."""

    def __init__(self, bus: MirrorSource, run_id: str, after_seq: int) -> None:
        self._bus = bus
        self._run_id = run_id
        self._after = after_seq
        self._inner: ChannelSubscription | StoredReplay | None = None
        self._mirror: RunMirror | None = None
        self._closed = False
        self._last = after_seq  # the newest seq given to the reader
        self._held: list[RunEvent] = []  # after a gap not filled yet
        self._tail_read = False

    def __aiter__(self) -> RedisSubscription:
        return self

    async def _resolve(self) -> ChannelSubscription | StoredReplay:
        if self._inner is None:
            mirror = await self._bus.mirror(self._run_id)
            if self._inner is None:  # a concurrent call may have resolved it meanwhile
                if mirror is None:
                    self._inner = StoredReplay(self._bus.storage, self._run_id, self._after)
                else:
                    mirror.readers += 1
                    self._mirror = mirror
                    self._inner = ChannelSubscription(mirror.channel, self._after)
                if self._closed:
                    self._inner.close()
        return self._inner

    async def __anext__(self) -> RunEvent:
        inner = await self._resolve()
        if isinstance(inner, StoredReplay):
            return await inner.__anext__()
        if not self._held:
            try:
                self._held.append(await inner.__anext__())
            except StopAsyncIteration:
                self._held = await self._stored_after()  # the stream ended short
                if not self._held:
                    raise
        await self._fill()
        return self._give(self._held.pop(0))

    def take_ready(self) -> list[RunEvent]:
        inner = self._inner
        if inner is None:
            return []
        if isinstance(inner, StoredReplay):
            return inner.take_ready()
        self._held.extend(inner.take_ready())
        ready: list[RunEvent] = []
        while self._held and not self._gap_before(self._held[0]):
            ready.append(self._give(self._held.pop(0)))
        return ready  # what follows a gap waits for the next __anext__, which fills it

    def _gap_before(self, event: RunEvent) -> bool:
        return event.seq > self._last + 1

    def _give(self, event: RunEvent) -> RunEvent:
        self._last = max(self._last, event.seq)
        return event

    async def _stored_after(self) -> list[RunEvent]:
        """At the stream's end: the stored events it lacked after the last one given (Redis
        restarted between them and the end marker, which then opened an empty stream)."""
        if self._tail_read:
            return []
        self._tail_read = True
        return await self._bus.storage.call(
            _stored_between, run_id=self._run_id, after=self._last, before=2**62
        )

    async def _fill(self) -> None:
        if not self._held or not self._gap_before(self._held[0]):
            return
        before = self._held[0].seq
        missing = await self._bus.storage.call(
            _stored_between, run_id=self._run_id, after=self._last, before=before
        )
        log.warning(
            "run %s: its stream lacks seqs %d-%d (Redis lost them): %d taken from the stored log",
            self._run_id, self._last + 1, before - 1, len(missing),
        )  # fmt: skip
        self._held[:0] = missing

    async def next(self, timeout: float) -> RunEvent | None:
        try:
            async with asyncio.timeout(timeout):  # not wait_for: see runs/awaiting.py
                return await self.__anext__()
        except (TimeoutError, StopAsyncIteration):
            return None

    @property
    def ended(self) -> bool:
        return self._closed or (self._inner is not None and self._inner.ended)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._inner is not None:
            self._inner.close()
        if self._mirror is not None:
            self._bus.release_mirror(self._mirror)
