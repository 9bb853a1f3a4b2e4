"""A check repeated every few seconds in one background task: the shape of the app's
watchers (`bridge_watch.BridgeWatch`, `takeover.TakeoverWatch`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)


class Periodic:
    """Runs `check()` every `interval_s` from `start()` until `close()`.

    A failing check is logged by `check_failed` and the next one runs anyway: a watcher
    that died would freeze what it watches, silently.
    """

    task_name = "periodic-check"
    sleep_first = False  # True: wait one interval before the first check

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.task_name)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def check(self) -> object:
        raise NotImplementedError

    def check_failed(self, exc: Exception) -> None:
        log.error("%s failed", self.task_name, exc_info=exc)

    async def _loop(self) -> None:
        if self.sleep_first:
            await asyncio.sleep(self.interval_s)
        while True:
            try:
                await self.check()
            except Exception as exc:
                self.check_failed(exc)
            await asyncio.sleep(self.interval_s)
