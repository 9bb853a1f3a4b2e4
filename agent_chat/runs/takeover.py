"""Taking over the runs of a worker that died (several workers, `runs/leases.py`).

Every worker looks, every `interval_s`, for answers RUNNING in the database that it does
not follow, and re-attaches to each (`RunManager.reattach`): that takes the run's lease
first, which only succeeds when no worker holds it, i.e. its consumer stopped renewing.
The new consumer reads the bridge from the last stored seq; events the dead one had
already published are refused by the stream (their ids exist), and rows it had already
stored are skipped by the log's unique (message_id, seq).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from agent_chat.db import messages
from agent_chat.db.models import ChatMessage
from agent_chat.runs.periodic import Periodic
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class TakeoverWatch(Periodic):
    task_name = "run-takeover"
    sleep_first = True  # RunManager.start has just re-attached what it could

    def __init__(
        self,
        *,
        storage: Storage,
        followed: Callable[[str], bool],
        reattach: Callable[[ChatMessage], Awaitable[None]],
        interval_s: float = 1.0,
    ) -> None:
        super().__init__(interval_s)
        self._storage = storage
        self._followed = followed  # whether this worker consumes the run already
        self._reattach = reattach

    async def check(self) -> None:
        for message in await self._storage.call(messages.running_messages):
            if message.run_id and not self._followed(message.run_id):
                await self._reattach(message)

    def check_failed(self, exc: Exception) -> None:
        # The database or Redis being away for a moment is expected: a line, not a trace.
        # Dead workers' runs stall until the watch sees them, so it never stops.
        if isinstance(exc, (RedisError, SQLAlchemyError)):
            log.warning("looking for runs to take over failed: %s", exc)
        else:
            log.error("looking for runs to take over failed", exc_info=exc)
