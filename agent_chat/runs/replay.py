"""A finished run's events, read back from the stored log (`chat_message_log`).

`RunManager.subscribe` answers with this when the run is not live in this process: the
same `Subscription` shape as a live channel, so a reader need not know which it got.
"""

from __future__ import annotations

import asyncio

from agent_chat.db import logs, messages
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.log_codec import stored_event
from agent_chat.runs.storage import Storage


def _stored_events(*, session, run_id: str) -> list[RunEvent]:
    message = messages.message_by_run(session=session, run_id=run_id)
    if message is None:
        return []
    rows = logs.list_logs(session=session, message_id=message.id)
    return [stored_event(r.seq, r.kind, r.content, r.meta_json) for r in rows]


class StoredReplay:
    """The stored events after `after_seq`, then the end. Read once, on first use."""

    def __init__(self, storage: Storage, run_id: str, after_seq: int = 0) -> None:
        self._storage = storage
        self._run_id = run_id
        self._after = after_seq
        self._events: list[RunEvent] | None = None
        self._load_lock = asyncio.Lock()

    def __aiter__(self) -> StoredReplay:
        return self

    async def _load(self) -> list[RunEvent]:
        async with self._load_lock:
            if self._events is None:
                events = await self._storage.call(_stored_events, run_id=self._run_id)
                # A merged delta row carries its last seq: a row that ends after `after_seq`
                # but starts before it is sent whole (rows keep no per-seq split).
                self._events = [e for e in events if e.seq > self._after]
        return self._events

    def take_ready(self) -> list[RunEvent]:
        ready, self._events = (self._events or []), ([] if self._events is not None else None)
        return ready

    async def next(self, timeout: float) -> RunEvent | None:
        try:
            async with asyncio.timeout(timeout):  # not wait_for: see runs/awaiting.py
                return await self.__anext__()
        except (TimeoutError, StopAsyncIteration):
            return None

    async def __anext__(self) -> RunEvent:
        events = await self._load()
        if not events:
            raise StopAsyncIteration
        return events.pop(0)

    @property
    def ended(self) -> bool:
        return self._events is not None and not self._events

    def close(self) -> None:
        self._events = []
