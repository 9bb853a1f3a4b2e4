"""One worker's mirror of one run's Redis stream (`runs/redis_bus.py`): a task reads the
stream from its start (XREAD blocking from the last id read, so nothing is read twice or
skipped) into an in-process channel, until the end marker."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Protocol

from redis.exceptions import RedisError

from agent_chat.protocol.events import RunEvent
from agent_chat.runs.bus import _Channel

log = logging.getLogger(__name__)

READ_COUNT = 1000  # entries per read
BLOCK_MS = 1000  # a read waits this long for a new entry, then checks the stream is there


def decode_event(payload: str) -> RunEvent:
    raw = json.loads(payload)
    return RunEvent(seq=int(raw["seq"]), type=str(raw["type"]), data=dict(raw["data"]))


class MirrorSource(Protocol):
    """What a mirror needs of the bus (`RedisRunBus`)."""

    client: Any

    def key(self, run_id: str) -> str: ...

    async def stream_gone(self, run_id: str) -> bool: ...

    def mirror_ended(self, mirror: RunMirror) -> None: ...


class RunMirror:
    def __init__(self, bus: MirrorSource, run_id: str, channel: _Channel) -> None:
        self.bus = bus
        self.run_id = run_id
        self.channel = channel
        self.readers = 0
        self.task: asyncio.Task | None = None
        self.last_id = "0-0"

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop(), name=f"redis-mirror-{self.run_id}")

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def _loop(self) -> None:
        try:
            await self._read()
        finally:
            # Ended, stopped or failed: readers see the end, a new reader starts afresh.
            self.channel.close()
            self.bus.mirror_ended(self)

    async def _read(self) -> None:
        key = self.bus.key(self.run_id)
        backoff = 0.2
        while True:
            try:
                reply = await self.bus.client.xread(
                    {key: self.last_id}, count=READ_COUNT, block=BLOCK_MS
                )
                if not reply:
                    if await self.bus.stream_gone(self.run_id):
                        log.warning("the stream of run %s is gone before its end", self.run_id)
                        return
                    continue
                backoff = 0.2
            except RedisError as exc:
                log.warning("reading run %s from Redis failed: %s", self.run_id, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            for entry_id, fields in reply[0][1]:
                self.last_id = entry_id
                if "end" in fields:
                    return
                if "e" in fields:
                    self.channel.append(decode_event(fields["e"]))
