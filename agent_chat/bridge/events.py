"""A run's event buffer (seq numbers, cross-thread wake-ups) and SSE framing."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agent_chat.protocol.events import TERMINAL_EVENTS

logger = logging.getLogger(__name__)

KEEPALIVE_FRAME = ": keep-alive\n\n"


@dataclass(frozen=True)
class Event:
    seq: int
    type: str
    data: dict[str, Any]

    def sse(self) -> str:
        """The event as one SSE frame."""
        payload = json.dumps(self.data, ensure_ascii=False, default=str)
        return f"id: {self.seq}\nevent: {self.type}\ndata: {payload}\n\n"


class EventBuffer:
    """Append-only events of one run.

    Written from the agent's threads, read by any number of SSE streams on the event loop.
    Nothing is appended after the terminal event.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._closed = False
        # When the last event was appended (monotonic): the run's inactivity watchdog reads it.
        # Keep-alive comments are not events and do not move it.
        self._last_emit = time.monotonic()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def readers(self) -> int:
        """How many streams read the run now."""
        with self._lock:
            return len(self._waiters)

    @property
    def last_seq(self) -> int:
        with self._lock:
            return len(self._events)

    def idle_for(self) -> float:
        """Seconds since the last event (or since the buffer was made)."""
        with self._lock:
            return time.monotonic() - self._last_emit

    def last_event(self) -> Event | None:
        with self._lock:
            return self._events[-1] if self._events else None

    def emit(self, type_: str, **fields: Any) -> Event | None:
        """Append an event; returns it, or None if the run already ended."""
        with self._lock:
            if self._closed:
                logger.warning("run %s: %s after the terminal event dropped", self.run_id, type_)
                return None
            seq = len(self._events) + 1
            data = {**fields, "run_id": self.run_id, "seq": seq, "ts": time.time()}
            event = Event(seq=seq, type=type_, data=data)
            self._events.append(event)
            self._last_emit = time.monotonic()
            if type_ in TERMINAL_EVENTS:
                self._closed = True
            waiters = list(self._waiters)
        for loop, flag in waiters:
            try:
                loop.call_soon_threadsafe(flag.set)
            except RuntimeError:  # that loop is closed: its stream is gone
                with self._lock:
                    self._waiters.discard((loop, flag))
        return event

    def after(self, seq: int) -> list[Event]:
        """Events with a seq greater than ``seq``."""
        with self._lock:
            return self._events[max(seq, 0) :]

    def all(self) -> list[Event]:
        return self.after(0)

    async def stream(self, last_event_id: int, keepalive_s: float) -> AsyncIterator[str]:
        """SSE frames: the events after ``last_event_id``, then live ones, with keep-alives.

        Ends after the terminal event has been sent.
        """
        loop = asyncio.get_running_loop()
        flag = asyncio.Event()
        waiter = (loop, flag)
        with self._lock:
            self._waiters.add(waiter)
        sent = last_event_id
        next_keepalive = loop.time() + keepalive_s
        try:
            while True:
                flag.clear()
                for event in self.after(sent):
                    yield event.sse()
                    sent = event.seq
                if self._closed and sent >= self.last_seq:
                    return
                timeout = next_keepalive - loop.time()
                if timeout > 0:
                    try:
                        async with asyncio.timeout(timeout):  # wait_for may drop a cancel
                            await flag.wait()
                        continue
                    except TimeoutError:
                        pass
                # A fixed timer, whether events flow or not.
                next_keepalive += keepalive_s
                yield KEEPALIVE_FRAME
        finally:
            with self._lock:
                self._waiters.discard(waiter)
