"""How a run's events and the conversations' states reach their readers (in one process).

The consumer of a run publishes each event once; any number of readers (a browser tab, the
sidebar, later the HTTP API's SSE stream) follow it through a `Subscription`, from any seq.
`RunBus` is the interface: this in-process `LocalRunBus` is one implementation, and a
scaled deployment can put another (e.g. Redis Streams) behind it without touching readers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from agent_chat.protocol.events import RunEvent


@dataclass(frozen=True)
class SessionChange:
    """A conversation's run state changed: "running", "waiting" (for an answer) or ""
    (no run any more: finished, failed or stopped). `owner_id`: whose conversation it is;
    only that person's readers hear it (`EVERYONE`: a change for all, e.g. the bridge)."""

    session_uuid: str
    state: str
    owner_id: int | None


EVERYONE = 0  # no user has id 0: a change every reader hears (runs/bridge_watch.py)


class Subscription(Protocol):
    """Events of one run (or changes of all conversations), in order, until the end.

    `async for` waits for each; `take_ready()` returns what has arrived without waiting
    (a reader that batches, e.g. every 50 ms); `next(timeout)` waits at most `timeout`
    seconds (None when nothing came). Iteration ends after the run's last event."""

    def __aiter__(self) -> Subscription: ...

    async def __anext__(self) -> RunEvent: ...

    def take_ready(self) -> list[RunEvent]: ...

    async def next(self, timeout: float) -> RunEvent | None: ...

    def close(self) -> None: ...


class RunBus(Protocol):
    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    def open(self, run_id: str, history: Iterable[RunEvent] = ()) -> None: ...

    def publish(self, run_id: str, event: RunEvent) -> None: ...

    def close(self, run_id: str) -> None: ...

    def subscribe(self, run_id: str, after_seq: int = 0) -> Subscription | None: ...

    def publish_session(self, change: SessionChange) -> None: ...

    def session_changes(self, user_id: int) -> SessionChanges: ...


class _Channel:
    """One run's events so far, shared by its readers (each keeps its own position)."""

    def __init__(self, history: Iterable[RunEvent]) -> None:
        self.events: list[RunEvent] = list(history)
        self.closed = False
        self._changed = asyncio.Event()

    def append(self, event: RunEvent) -> None:
        self.events.append(event)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        # Waiters hold the old event; a fresh one catches the next change.
        old, self._changed = self._changed, asyncio.Event()
        old.set()

    async def wait(self) -> None:
        await self._changed.wait()


class ChannelSubscription:
    """A reader's position in a `_Channel`. Cancelling a wait loses nothing."""

    def __init__(self, channel: _Channel, after_seq: int) -> None:
        self._channel = channel
        self._after = after_seq
        self._index = 0
        self._closed = False

    def __aiter__(self) -> ChannelSubscription:
        return self

    def take_ready(self) -> list[RunEvent]:
        events = self._channel.events
        out = [
            e
            for e in events[self._index :]
            # bridge_link events (seq 0) are states of the link, not numbered: always pass
            if e.seq == 0 or e.seq > self._after
        ]
        self._index = len(events)
        numbered = [e.seq for e in out if e.seq]
        if numbered:
            self._after = max(self._after, numbered[-1])
        return out

    @property
    def ended(self) -> bool:
        return self._closed or (self._channel.closed and self._index >= len(self._channel.events))

    async def next(self, timeout: float) -> RunEvent | None:
        try:
            async with asyncio.timeout(timeout):  # not wait_for: see runs/awaiting.py
                return await self.__anext__()
        except TimeoutError:
            return None

    async def __anext__(self) -> RunEvent:
        while True:
            events = self._channel.events
            while self._index < len(events):
                event = events[self._index]
                self._index += 1
                if event.seq == 0 or event.seq > self._after:
                    self._after = max(self._after, event.seq)
                    return event
            if self.ended:
                raise StopAsyncIteration
            await self._channel.wait()

    def close(self) -> None:
        self._closed = True


class SessionChanges:
    """The run state changes of one person's conversations from the moment of subscribing,
    for one reader (another person's changes never reach it). `close()` when done (the bus
    stops queueing for it)."""

    def __init__(self, bus: LocalRunBus | Any, user_id: int) -> None:
        self._bus = bus  # any bus that keeps its readers in `_readers`
        self.user_id = user_id
        self._queue: asyncio.Queue[SessionChange] = asyncio.Queue()

    def __aiter__(self) -> SessionChanges:
        return self

    async def __anext__(self) -> SessionChange:
        return await self._queue.get()

    async def next(self, timeout: float) -> SessionChange | None:
        try:
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except TimeoutError:
            return None

    def take_ready(self) -> list[SessionChange]:
        out = []
        while not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out

    def put(self, change: SessionChange) -> None:
        if change.owner_id in (self.user_id, EVERYONE):
            self._queue.put_nowait(change)

    def close(self) -> None:
        self._bus._readers.discard(self)


class LocalRunBus:
    """The bus of a single web process: channels in memory, dropped when a run ends (its
    events stay in the database, where `RunManager.subscribe` replays them from)."""

    def __init__(self) -> None:
        self._channels: dict[str, _Channel] = {}
        self._readers: set[SessionChanges] = set()

    async def start(self) -> None:
        """Nothing to connect to (a bus over a server connects here)."""

    async def aclose(self) -> None:
        """Nothing to release."""

    def open(self, run_id: str, history: Iterable[RunEvent] = ()) -> None:
        self._channels[run_id] = _Channel(history)

    def publish(self, run_id: str, event: RunEvent) -> None:
        channel = self._channels.get(run_id)
        if channel is not None:
            channel.append(event)

    def close(self, run_id: str) -> None:
        channel = self._channels.pop(run_id, None)
        if channel is not None:
            channel.close()

    def subscribe(self, run_id: str, after_seq: int = 0) -> ChannelSubscription | None:
        """The run's events after `after_seq`, then live; None if the run is not open."""
        channel = self._channels.get(run_id)
        return ChannelSubscription(channel, after_seq) if channel is not None else None

    def publish_session(self, change: SessionChange) -> None:
        for reader in list(self._readers):
            reader.put(change)

    def session_changes(self, user_id: int) -> SessionChanges:
        reader = SessionChanges(self, user_id)
        self._readers.add(reader)
        return reader
