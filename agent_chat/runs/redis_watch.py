"""Notice when a Redis server came back empty (restarted without persistence, or flushed):
its `run_id` (INFO server) changes with every start. Reflex keeps every tab's state and
socket record in its Redis (`REFLEX_REDIS_URL`); when that Redis restarts, a connected tab
is left with a socket whose state is gone, and the next update it gets is a fresh, empty
state (seen: the conversation and the sidebar vanish and a running answer stops
following). The app module reacts by making this worker's tabs reconnect, which reloads
what they show (`agent_chat.py:_after_redis_restart`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent_chat.runs.periodic import Periodic

log = logging.getLogger(__name__)
WATCH_INTERVAL_S = 1.0


class RedisRestartWatch(Periodic):
    """Calls `on_restart` once per new start of the Redis at `url` (not for the first one
    seen); while Redis does not answer it waits."""

    task_name = "redis-restart-watch"

    def __init__(
        self,
        url: str,
        on_restart: Callable[[], Awaitable[None]],
        interval_s: float = WATCH_INTERVAL_S,
    ) -> None:
        super().__init__(interval_s)
        self.client = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
        self.on_restart = on_restart
        self.run_id: str | None = None
        self.restarts = 0

    async def check(self) -> bool:
        try:
            info = await self.client.info("server")
        except RedisError:
            return False  # down: the next answer says whether it restarted
        run_id = str(info.get("run_id", ""))
        if self.run_id is None or run_id == self.run_id:
            self.run_id = run_id
            return False
        self.run_id = run_id
        self.restarts += 1
        log.warning("Redis restarted (it lost what it held): reconnecting this worker's tabs")
        await self.on_restart()
        return True

    async def close(self) -> None:
        await super().close()
        await self.client.aclose()
