"""Taking over the runs of a worker that died (several workers, `runs/leases.py`).

Every worker looks, every `interval_s`, for answers RUNNING in the database that it does
not follow, and re-attaches to each (`RunManager.reattach`): that takes the run's lease
first, which only succeeds when no worker holds it, i.e. its consumer stopped renewing.
The new consumer reads the bridge from the last stored seq; events the dead one had
already published are refused by the stream (their ids exist), and rows it had already
stored are skipped by the log's unique (message_id, seq).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from agent_chat.db import messages
from agent_chat.db.models import ChatMessage
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class TakeoverWatch:
    def __init__(
        self,
        *,
        storage: Storage,
        followed: Callable[[str], bool],
        reattach: Callable[[ChatMessage], Awaitable[None]],
        interval_s: float = 1.0,
    ) -> None:
        self._storage = storage
        self._followed = followed  # whether this worker consumes the run already
        self._reattach = reattach
        self.interval_s = interval_s
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="run-takeover")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def check(self) -> None:
        for message in await self._storage.call(messages.running_messages):
            if message.run_id and not self._followed(message.run_id):
                await self._reattach(message)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.check()
            except (RedisError, SQLAlchemyError) as exc:
                log.warning("looking for runs to take over failed: %s", exc)
            except Exception:  # never let the watch die: dead workers' runs would stall
                log.exception("looking for runs to take over failed")
